# Boot parameters of scenario "trace" (scenarios/trace.config): the RCU
# events rcuwb's anatomy reads (docs/anatomy.md), enabled from boot, and a
# per-CPU trace buffer that holds a whole rcuscale run without overwriting
# (a run that lost events says so and is not analysed).  rcuscale dumps the
# buffer to the console when its writers are done.  no_hash_pointers: the
# callbacks' rcu_head addresses as they are (lib/vsprintf.c), so that a
# writer's call_rcu() and its callback's invocation can be paired; hashed,
# they read "(____ptrval____)" until the guest's RNG is ready, which a
# guest without an entropy source may never be.
trace_event=rcu:rcu_grace_period,rcu:rcu_quiescent_state_report,rcu:rcu_fqs,rcu:rcu_callback,rcu:rcu_invoke_callback,rcu:rcu_exp_grace_period,rcu:rcu_exp_funnel_lock
trace_buf_size=2M
no_hash_pointers
