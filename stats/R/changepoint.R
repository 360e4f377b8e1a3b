# History and change points (issue 12, item 4): per stable cell key and
# gated statistic, the per-run values in the branch's first-parent commit
# order; E-divisive change points on them; their state in SQLite.
#
# Why E-divisive (Matteson & James 2014, "A nonparametric approach for
# multiple change point analysis of multivariate data", JASA 109:334-345):
# * distribution-free: the energy distance compares whole distributions, so
#   per-run values that move in whole scheduler ticks (ties, multimodal
#   p90s), skew and the odd slow boot need no normal model and no tuning of
#   a noise level;
# * multiple change points by hierarchical bisection, each one tested with a
#   permutation test, so "how many" is decided by a significance level, not
#   a penalty constant;
# * what MongoDB's performance CI (Daly et al., ICPE 2020) and Apache Otava
#   (formerly Datastax Hunter) run on the same kind of data: a per-commit
#   benchmark history.
# What it cannot see: a change smaller than the noise at the runs there are
# (see changepoint_power()); a change within the last `min_commits - 1`
# commits (no segment is short enough to hold it yet: it shows up rounds
# later); a slow drift spread over many commits (no single location to
# split at; it may be cut anywhere or not at all); a change in a commit that
# was never measured (it is located to the range between two measured
# commits, never inside it); timeouts (censored runs carry no value here:
# they are the gate's failure test's business); a change in the
# distribution of samples within a boot that leaves the per-run mean and p90
# where they were.
#
# Runs versus commits.  The energy statistic is computed on the runs (all
# the information there is, within-commit spread included), but
#   1. a split may only fall on a commit boundary, and each side of it must
#      hold at least `min_commits` measured commits (default 2): a segment
#      of one commit is never formed, so one odd commit is never a change
#      on a segment of its own;
#   2. the permutation test permutes whole commits (a commit's runs stay
#      together) within the current segments.  Under "no change" the
#      commits, not the runs, are exchangeable: every commit is a different
#      kernel binary (code layout, alignment) measured in its own round, so
#      runs of one commit are correlated and a run-level permutation would
#      call an odd commit (3 runs far from the rest) a change at tiny p.
#      With commit-level permutation one odd commit is just one unit that
#      lands anywhere among the others;
#   3. the split must also separate the commits: a two-sided rank-sum test
#      of the per-commit medians of the two stretches compared, at alpha
#      (commit_confirm()), so an odd commit among the first or last two
#      cannot make a 2-commit side on its own (simulated, 20% outlier,
#      10 commits of 3 runs: flagged in 2% of series at commits 1, 2, 10,
#      never at 5 or 9; without this rule 8-9% at commits 1, 2, 9).
# Power consequence: the test's resolution is set by the number of commits,
# not runs.  Even a clean split of c commits into c_old | c_new cannot get
# a p-value below about 2 / C(c, c_new) (it and its mirror image are the
# most extreme arrangements): 0.1 for 6 commits split 3|3, so never
# significant at 0.05; 0.008 for 10 commits split 5|5.  More runs per
# commit sharpen the statistic (less noise per commit) but do not lower
# that floor; the commit-level confirmation has the same floor.  And a change at the newest commit is found
# only once `min_commits` commits sit on its new side (default: the round
# after the one that measured it).  changepoint_power() gives the
# detection rate by simulation.
#
# Significance: each split is accepted when its permutation p-value (R
# permutations, p = (1 + #{T* >= T}) / (R + 1)) is at most `alpha`
# (default 0.05, ecp's sig.lvl default and the gate's alpha) and the
# commit-level confirmation (3. above) is too.  alpha bounds the
# false-alarm rate of one analysis of one series (cell x statistic;
# measured: 1.5 to 2.5% at 0.05, see stats/README.md).  Every round
# analyses the whole history again, so over a history the levels repeat,
# not spend: changepoint_rounds() measures the false alerts per round
# (0.7% per series in the nightly shape) and the share of A/A branches with
# one by their 20th commit (8%); the state table reports each once, and
# "invalid" keeps it quiet after.  Use a smaller alpha (with R >= 20 /
# alpha) for wide matrices.
#
# Size: the relative change of the per-run mean (or p90) between the two
# adjacent segments, the gate's Hodges-Lehmann shift on the log scale with
# Moses bounds (log_compare() in verdict.R), two-sided `conf`.  The bounds
# treat runs as independent and ignore that the split was chosen where the
# difference is largest: read them as approximate (they are narrower than
# the truth when commits differ among themselves).
#
# Not in R's Debian archive: the `ecp` package (ecp::e.divisive).  The
# algorithm is small and is written here (energy distance with exponent 1,
# U-statistic within-sample terms as in the paper); energy::edist (Debian's
# r-cran-energy) checks the statistic in the tests.
#
# State: the table changepoints of the results database.  Its schema and
# the meaning of its columns are the runner's (runner/src/results/db.c, their one
# home); the functions under "Change-point state" below are the only R
# code that writes it, and they create nothing.

CHANGEPOINT_STATES <- c("new", "acknowledged", "invalid")

# ---------------------------------------------------------------------------
# History series

# The series of per-run values per cell and statistic, in commit order.
# `rt`: a run table (build_run_table(): id, cell = stable key, usable, the
# per-run statistics) with a commit id per run in column `commit_col`
# (default: "commit" or "commit_id" when present and not all NA, else "variant").  `commits`: the
# branch's first-parent order, data.frame(commit, position, [date],
# [subject]).  Runs of commits not in `commits` are left out; so are runs
# that are not usable (failed, host-busy, probe runs).
# Returns data.frame(cell, stat, commit, position, date, subject, run_id,
# value, y = log(value)), ordered by cell, stat, position, run id.
history_series <- function(rt, commits, stats = GATE_DEFAULT_STATS,
                           commit_col = c(Filter(function(x) !is.null(rt[[x]]) && any(!is.na(rt[[x]])),
                                                 c("commit", "commit_id")), "variant")[1]) {
  stopifnot(all(stats %in% names(GATE_STATS)), all(c("commit", "position") %in% names(commits)))
  empty <- data.frame(cell = character(), stat = character(), commit = character(),
                      position = numeric(), date = character(), subject = character(),
                      run_id = numeric(), value = numeric(), y = numeric())
  commits <- as.data.frame(commits)
  if (is.null(commits$date)) commits$date <- NA_character_
  if (is.null(commits$subject)) commits$subject <- NA_character_
  if (anyDuplicated(commits$commit)) stop("history_series: a commit is listed twice", call. = FALSE)
  if (!nrow(rt)) return(empty)
  use <- rt$usable & as.character(rt[[commit_col]]) %in% commits$commit
  rt <- rt[!is.na(use) & use, , drop = FALSE]
  if (!nrow(rt)) return(empty)
  m <- match(as.character(rt[[commit_col]]), commits$commit)
  out <- do.call(rbind, lapply(stats, function(s) {
    v <- rt[[GATE_STATS[[s]]]]
    data.frame(cell = rt$cell, stat = s, commit = commits$commit[m],
               position = commits$position[m], date = as.character(commits$date[m]),
               subject = as.character(commits$subject[m]), run_id = rt$id, value = v)
  }))
  out <- out[is.finite(out$value) & out$value > 0, , drop = FALSE]
  out$y <- log(out$value)
  out <- out[order(out$cell, out$stat, out$position, out$run_id), , drop = FALSE]
  rownames(out) <- NULL
  out
}

# Pooled within-commit SD of the log values of a series (the noise that
# changepoint_power() simulates at), NA with no commit of 2+ runs.
history_noise <- function(series) {
  g <- split(series$y, series$commit)
  g <- g[lengths(g) >= 2]
  if (!length(g)) return(NA_real_)
  ss <- sum(vapply(g, function(v) sum((v - mean(v))^2), numeric(1)))
  sqrt(ss / sum(lengths(g) - 1))
}

# ---------------------------------------------------------------------------
# E-divisive on commit blocks

# Block sums of a matrix in O(1): P is the (n+1) x (n+1) prefix-sum matrix.
prefix_sums <- function(D) {
  n <- nrow(D)
  P <- matrix(0, n + 1, n + 1)
  if (n) P[-1, -1] <- t(apply(apply(D, 2, cumsum), 1, cumsum))
  P
}
block_sum <- function(P, a, b, c, d) {
  # rows a..b, columns c..d (1-based, inclusive)
  P[b + 1, d + 1] - P[a, d + 1] - P[b + 1, c] + P[a, c]
}

# The scaled energy statistic Q of runs a..t-1 (X) against t..k (Y), from
# the prefix sums of |y_i - y_j|: m n / (m + n) * (2 mean|X - Y| -
# mean_{i<j}|X_i - X_j| - mean_{i<j}|Y_i - Y_j|)  (Matteson & James eq. 5).
energy_q <- function(P, a, t, k) {
  m <- t - a
  n <- k - t + 1
  between <- block_sum(P, a, t - 1, t, k) / (m * n)
  wx <- if (m > 1) block_sum(P, a, t - 1, a, t - 1) / (m * (m - 1)) else 0
  wy <- if (n > 1) block_sum(P, t, k, t, k) / (n * (n - 1)) else 0
  m * n / (m + n) * (2 * between - wx - wy)
}

# Best split of one segment of commits s..e (commit indices): the largest
# Q over the first commit t of the new side and the end k of the compared
# stretch (both sides at least `min_c` commits).  As in ecp, k ranges up
# to the segment's end: comparing t.. with a shorter stretch keeps a
# second change further on (a shift and its revert) from hiding the first.
# `cut`: cut[j + 1] = runs in commits 1..j.  Returns c(q, t, k) or NULL.
best_split <- function(P, cut, s, e, min_c) {
  best <- c(q = -Inf, t = NA, k = NA)
  if (e - s + 1 < 2 * min_c) return(NULL)
  for (t in seq(s + min_c, e - min_c + 1)) {
    for (k in seq(t + min_c - 1, e)) {
      q <- energy_q(P, cut[s] + 1, cut[t] + 1, cut[k + 1])
      if (q > best[["q"]]) best <- c(q = q, t = t, k = k)
    }
  }
  best
}

# Commit-level confirmation of a split: the two-sided rank-sum p-value
# (the gate's exact test with ties, rank_sum_greater()) of the per-commit
# medians `med` of commits `old` against commits `new` (the stretches the
# energy statistic compared: segment start..t-1 against t..k).  E-divisive's
# energy statistic sees runs; an odd commit next to the end of a segment
# (commit 2 of 10, say) can carry a split with a 2-commit side on its own,
# at about 8% of series at alpha 0.05 in simulation.  Requiring the
# commits of each side to be apart as commits removes that: a side of 2
# commits must hold the 2 most extreme commit medians.  Costs a little
# power at small shifts (the commit medians have fewer units than runs).
commit_confirm <- function(med, old, new) {
  a <- med[new]
  b <- med[old]
  min(1, 2 * min(rank_sum_greater(a, b), rank_sum_greater(b, a)))
}

# Over all segments (starts `starts`, a segment runs to the next start - 1)
# the best split: c(q, t, k) (t = NA when no segment can be split).
best_over_segments <- function(P, cut, starts, nc, min_c) {
  ends <- c(starts[-1] - 1, nc)
  best <- c(q = -Inf, t = NA, k = NA)
  for (i in seq_along(starts)) {
    b <- best_split(P, cut, starts[i], ends[i], min_c)
    if (!is.null(b) && b[["q"]] > best[["q"]]) best <- b
  }
  best
}

# E-divisive change points of one series: `y` the log values of the runs,
# `commit_index` their commit's place in the order (any increasing
# numbers).  Returns data.frame(first_bad, p, q, p_commits): the index
# (1 = the first commit of the series) of the first commit of each new
# segment, in the order found, with the permutation p-value, the energy
# statistic and the commit-level confirmation p-value.  A split is accepted
# when p <= alpha and p_commits <= alpha; the first that is not stops the
# bisection.  Deterministic for a given seed (the caller's RNG state is
# left alone).
edivisive_commits <- function(y, commit_index, min_commits = 2, alpha = 0.05,
                              R = 199, seed = 1, max_cp = Inf) {
  stopifnot(min_commits >= 1, alpha > 0, alpha < 1, R >= 1)
  none <- data.frame(first_bad = integer(), p = numeric(), q = numeric(), p_commits = numeric())
  o <- order(commit_index)
  y <- y[o]
  ci <- match(commit_index[o], unique(commit_index[o]))
  nc <- max(c(0, ci))
  if (nc < 2 * min_commits) return(none)
  runs_of <- split(seq_along(y), ci)
  sizes <- unname(lengths(runs_of))
  D <- abs(outer(y, y, "-"))
  cut_of <- function(order_c) c(0, cumsum(sizes[order_c]))
  P <- prefix_sums(D)
  cut <- cut_of(seq_len(nc))
  starts <- 1L
  found <- none
  with_seed(seed, {
    while (nrow(found) < max_cp) {
      obs <- best_over_segments(P, cut, starts, nc, min_commits)
      if (is.na(obs[["t"]])) break
      ends <- c(starts[-1] - 1, nc)
      exceed <- 0
      for (r in seq_len(R)) {
        # permute whole commits within each current segment
        perm <- unlist(lapply(seq_along(starts), function(i) {
          s <- starts[i]:ends[i]
          s[sample.int(length(s))]
        }))
        idx <- unlist(runs_of[perm], use.names = FALSE)
        st <- best_over_segments(prefix_sums(D[idx, idx, drop = FALSE]), cut_of(perm),
                                 starts, nc, min_commits)
        if (st[["q"]] >= obs[["q"]] - 1e-12) exceed <- exceed + 1
      }
      p <- (1 + exceed) / (R + 1)
      if (p > alpha) break
      # the commits must have moved, not one of them: see commit_confirm()
      t <- as.integer(obs[["t"]])
      i <- max(which(starts < t))
      pc <- commit_confirm(vapply(runs_of, function(r) stats::median(y[r]), numeric(1)),
                           starts[i]:(t - 1), t:as.integer(obs[["k"]]))
      if (pc > alpha) break
      found <- rbind(found, data.frame(first_bad = t, p = p, q = obs[["q"]], p_commits = pc))
      starts <- sort(c(starts, as.integer(obs[["t"]])))
    }
  })
  found
}

# Change points of one series with their commits and sizes.
# `series`: rows of one cell and stat (history_series()).  `commits`: the
# branch order (for the first suspect commit, which may be unmeasured).
# Returns one row per change point, in commit order: cell, stat,
# last_good, first_bad (measured commits around the change), first_suspect
# (the branch's next commit after last_good), positions, size, lo, hi
# (relative change of the adjacent segments' per-run values, two-sided
# `conf` interval), p (permutation), p_commits (commit-level confirmation),
# commits_old, commits_new, runs_old, runs_new.
series_changepoints <- function(series, commits = NULL, min_commits = 2, alpha = 0.05,
                                R = 199, seed = 1, conf = 0.95) {
  out <- data.frame(cell = character(), stat = character(), last_good = character(),
                    first_bad = character(), first_suspect = character(),
                    last_good_pos = numeric(), first_bad_pos = numeric(), size = numeric(),
                    lo = numeric(), hi = numeric(), p = numeric(), p_commits = numeric(),
                    commits_old = integer(),
                    commits_new = integer(), runs_old = integer(), runs_new = integer())
  if (!nrow(series)) return(out)
  series <- series[order(series$position, series$run_id), , drop = FALSE]
  ucommit <- unique(series$commit)
  upos <- series$position[match(ucommit, series$commit)]
  ci <- match(series$commit, ucommit)
  cp <- edivisive_commits(series$y, ci, min_commits = min_commits, alpha = alpha, R = R,
                          seed = seed)
  if (!nrow(cp)) return(out)
  cp <- cp[order(cp$first_bad), , drop = FALSE]
  bounds <- c(1, cp$first_bad, length(ucommit) + 1)
  rows <- lapply(seq_len(nrow(cp)), function(i) {
    t <- cp$first_bad[i]
    old_c <- bounds[i]:(t - 1)
    new_c <- t:(bounds[i + 2] - 1)
    old <- series$value[ci %in% old_c]
    new <- series$value[ci %in% new_c]
    x <- log_compare(old, new, a = (1 - conf) / 2)
    suspect <- ucommit[t]
    if (!is.null(commits)) {
      nxt <- commits$commit[commits$position > upos[t - 1]]
      nxt_pos <- commits$position[commits$position > upos[t - 1]]
      if (length(nxt)) suspect <- nxt[which.min(nxt_pos)]
    }
    data.frame(cell = series$cell[1], stat = series$stat[1], last_good = ucommit[t - 1],
               first_bad = ucommit[t], first_suspect = suspect, last_good_pos = upos[t - 1],
               first_bad_pos = upos[t], size = x$rel, lo = x$rel_lo, hi = x$rel_hi,
               p = cp$p[i], p_commits = cp$p_commits[i], commits_old = length(old_c),
               commits_new = length(new_c),
               runs_old = length(old), runs_new = length(new))
  })
  do.call(rbind, rows)
}

# Change points of every cell and statistic of a history.
history_changepoints <- function(series, commits = NULL, min_commits = 2, alpha = 0.05,
                                 R = 199, seed = 1, conf = 0.95) {
  if (!nrow(series)) return(series_changepoints(series))
  keys <- unique(series[, c("cell", "stat")])
  out <- lapply(seq_len(nrow(keys)), function(i) {
    s <- series[series$cell == keys$cell[i] & series$stat == keys$stat[i], , drop = FALSE]
    series_changepoints(s, commits, min_commits = min_commits, alpha = alpha, R = R,
                        seed = seed, conf = conf)
  })
  out <- do.call(rbind, out)
  rownames(out) <- NULL
  out
}

# ---------------------------------------------------------------------------
# Power by simulation

# A synthetic series: `n` commits of `k` runs, log-normal per-run values
# around `base_us` with log-SD `sd_log` (plus a per-commit effect of SD
# `sd_commit`), a relative shift `d` from commit `at` on.
simulate_series <- function(n, k, d = 0, at = NULL, sd_log = 0.03, sd_commit = 0,
                            base_us = 4000, cell = "sim", stat = "mean") {
  commit <- rep(seq_len(n), each = k)
  eff <- stats::rnorm(n, 0, sd_commit)[commit]
  shift <- if (is.null(at) || d == 0) 0 else ifelse(commit >= at, log1p(d), 0)
  y <- log(base_us) + eff + shift + stats::rnorm(n * k, 0, sd_log)
  data.frame(cell = cell, stat = stat, commit = sprintf("c%02d", commit), position = commit,
             date = NA_character_, subject = NA_character_, run_id = seq_along(y),
             value = exp(y), y = y)
}

# Detection probability of a shift `d` at commit `at` (default: the middle)
# with `k` runs per commit and `n` commits, at noise `sd_log` (within
# commit) and `sd_commit` (between commits): the share of `nsim` simulated
# series in which a change point is found within `tolerance` commits of
# `at`, with a 95% Clopper-Pearson interval.  With d = 0 it is the
# false-alarm rate (any change point found).  Vectorised over d, k, n
# (every combination).  Deterministic for a seed.
changepoint_power <- function(d, k, n, at = NULL, sd_log = 0.03, sd_commit = 0, nsim = 100,
                              min_commits = 2, alpha = 0.05, R = 199, seed = 1,
                              tolerance = 0) {
  grid <- expand.grid(d = d, k = k, n = n)
  res <- lapply(seq_len(nrow(grid)), function(g) {
    d <- grid$d[g]; k <- grid$k[g]; n <- grid$n[g]
    where <- if (is.null(at)) floor(n / 2) + 1 else at
    hits <- with_seed(seed + g, vapply(seq_len(nsim), function(i) {
      s <- simulate_series(n, k, d, where, sd_log, sd_commit)
      cp <- edivisive_commits(s$y, s$position, min_commits = min_commits, alpha = alpha,
                              R = R, seed = seed + i)
      if (d == 0) nrow(cp) > 0 else any(abs(cp$first_bad - where) <= tolerance)
    }, logical(1)))
    ci <- stats::binom.test(sum(hits), nsim)$conf.int
    data.frame(d = d, k = k, n = n, at = where, sd_log = sd_log, sd_commit = sd_commit,
               nsim = nsim, detected = sum(hits), rate = mean(hits), lo = ci[1], hi = ci[2])
  })
  do.call(rbind, res)
}

# False alerts over a history of rounds, as `rcuwb nightly` raises them.
# Every round analyses the whole history again at level `alpha`
# (history_changepoints(), the schedule's fixed seed), and a change point
# is an alert only when none is stored within `move` commits of it
# (changepoints_upsert()).  So `alpha` bounds the false-alarm rate of one
# analysis, not of the history: the analyses of one branch share almost
# all their data, so their false alerts are strongly correlated, but each
# round is another look.  This simulates A/A branches (no change) round by
# round: round r analyses the first r commits (`k` runs each, noise as
# simulate_series()), from the first round with 2 * min_commits commits up
# to `rounds` commits.  Returns one row: nsim branches; the share with at
# least one false alert within each horizon of `horizons` rounds, with a
# 95% Clopper-Pearson interval (columns any_H, any_H_lo, any_H_hi); the
# false alerts per analysed round (alerts / rounds analysed, with its
# interval); and the alerts' positions (which commits they name), to show
# where false alerts come from.  Deterministic for a seed.
changepoint_rounds <- function(rounds = 30, k = 4, sd_log = 0.03, sd_commit = 0.01,
                               nsim = 50, horizons = rounds, min_commits = 2,
                               alpha = 0.05, R = 199, seed = 1, move = 1) {
  first <- 2 * min_commits
  stopifnot(rounds >= first, all(horizons >= 1), all(horizons <= rounds))
  one <- function(i) {
    s <- simulate_series(rounds, k, 0, NULL, sd_log, sd_commit)
    known <- integer()
    at_round <- integer()
    for (r in first:rounds) {
      keep <- s$position <= r
      cp <- edivisive_commits(s$y[keep], s$position[keep], min_commits = min_commits,
                              alpha = alpha, R = R, seed = seed)
      for (t in cp$first_bad) {
        if (!length(known) || min(abs(known - t)) > move) {
          known <- c(known, t)
          at_round <- c(at_round, r)
        }
      }
    }
    list(at = known, round = at_round)
  }
  sims <- with_seed(seed, lapply(seq_len(nsim), one))
  first_round <- vapply(sims, function(x) if (length(x$round)) min(x$round) else NA_real_,
                        numeric(1))
  out <- data.frame(rounds = rounds, k = k, sd_log = sd_log, sd_commit = sd_commit,
                    alpha = alpha, nsim = nsim)
  for (h in horizons) {
    # rounds 1..h of the branch: analyses of up to h commits (the first
    # round that can analyse anything has 2 * min_commits commits)
    hit <- !is.na(first_round) & first_round <= h
    ci <- stats::binom.test(sum(hit), nsim)$conf.int
    out[[paste0("any_", h)]] <- mean(hit)
    out[[paste0("any_", h, "_lo")]] <- ci[1]
    out[[paste0("any_", h, "_hi")]] <- ci[2]
  }
  alerts <- sum(lengths(lapply(sims, `[[`, "round")))
  looks <- nsim * (rounds - first + 1)
  ci <- stats::binom.test(min(alerts, looks), looks)$conf.int
  out$alerts <- alerts
  out$looks <- looks
  out$per_round <- alerts / looks
  out$per_round_lo <- ci[1]
  out$per_round_hi <- ci[2]
  out$positions <- paste(sort(unlist(lapply(sims, `[[`, "at"))), collapse = ",")
  out
}

# ---------------------------------------------------------------------------
# Change-point state (SQLite)

now_utc <- function() format(Sys.time(), "%Y-%m-%dT%H:%M:%SZ", tz = "UTC")

# Store the change points detected in one analysis of `schedule`.
# `cps`: history_changepoints() rows (cell, stat, last_good, first_bad,
# size, lo, hi, p); `commits`: data.frame(commit, position), the measured
# commits of the history (unique(series[, c("commit", "position")])), to
# tell how far a stored change point is from a detected one (pass the
# whole branch instead to count unmeasured commits too).  A detected change
# point is the same as a stored one of the same schedule, cell and stat
# when it has the same commit range, or when its first_bad commit is at
# most `move` (default 1) commits away in that order (a commit no longer
# in it never matches by distance); then its range and numbers are
# updated and its state, id, why and created_at are kept (acknowledged
# stays acknowledged, invalid stays invalid).  Otherwise it is inserted as
# new.  Returns cps with columns id, state and is_new (TRUE only for the
# ones inserted now: what to notify).
changepoints_upsert <- function(con, schedule, cps, commits = NULL, move = 1,
                                now = now_utc()) {
  need_schema(con, "changepoints")
  cps$id <- rep(NA_real_, nrow(cps))
  cps$state <- rep(NA_character_, nrow(cps))
  cps$is_new <- rep(FALSE, nrow(cps))
  if (!nrow(cps)) return(cps)
  # distance in commits of the given order (its rank, not its position
  # number: with the measured commits, one commit = one measured commit)
  order_ids <- if (is.null(commits)) character() else commits$commit[order(commits$position)]
  pos <- function(x) match(x, order_ids)
  DBI::dbWithTransaction(con, {
    for (i in seq_len(nrow(cps))) {
      old <- DBI::dbGetQuery(con, paste(
        "SELECT id, state, last_good, first_bad FROM changepoints",
        "WHERE schedule = ? AND cell = ? AND stat = ?"),
        params = list(schedule, cps$cell[i], cps$stat[i]))
      same <- old$last_good == cps$last_good[i] & old$first_bad == cps$first_bad[i]
      dist <- abs(pos(old$first_bad) - pos(cps$first_bad[i]))
      # a stored one already claimed by an earlier row of this batch is not reused
      taken <- old$id %in% cps$id[seq_len(i - 1)]
      cand <- which(!taken & (same | (!is.na(dist) & dist <= move)))
      if (length(cand)) {
        j <- cand[order(!same[cand], dist[cand])][1]
        DBI::dbExecute(con, paste(
          "UPDATE changepoints SET last_good = ?, first_bad = ?, size = ?, lo = ?, hi = ?,",
          "p = ?, updated_at = ? WHERE id = ? AND NOT EXISTS (SELECT 1 FROM changepoints c",
          "WHERE c.schedule = ? AND c.cell = ? AND c.stat = ? AND c.last_good = ?",
          "AND c.first_bad = ? AND c.id != ?)"),
          params = list(cps$last_good[i], cps$first_bad[i], cps$size[i], cps$lo[i], cps$hi[i],
                        cps$p[i], now, old$id[j], schedule, cps$cell[i], cps$stat[i],
                        cps$last_good[i], cps$first_bad[i], old$id[j]))
        cps$id[i] <- old$id[j]
        cps$state[i] <- old$state[j]
      } else {
        DBI::dbExecute(con, paste(
          "INSERT INTO changepoints(schedule, cell, stat, last_good, first_bad, size, lo, hi,",
          "p, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'new', ?, ?)"),
          params = list(schedule, cps$cell[i], cps$stat[i], cps$last_good[i], cps$first_bad[i],
                        cps$size[i], cps$lo[i], cps$hi[i], cps$p[i], now, now))
        cps$id[i] <- DBI::dbGetQuery(con, "SELECT last_insert_rowid() AS id")$id
        cps$state[i] <- "new"
        cps$is_new[i] <- TRUE
      }
    }
  })
  cps
}

# Set the state of change point `id` (acknowledged or invalid, or back to
# new) with the reason.  Errors on an unknown id or state.
changepoint_set_state <- function(con, id, state, why = NA_character_, now = now_utc()) {
  need_schema(con, "changepoints")
  if (!(state %in% CHANGEPOINT_STATES)) {
    stop(sprintf("unknown change-point state '%s' (known: %s)", state,
                 paste(CHANGEPOINT_STATES, collapse = ", ")), call. = FALSE)
  }
  n <- DBI::dbExecute(con, "UPDATE changepoints SET state = ?, why = ?, updated_at = ? WHERE id = ?",
                      params = list(state, why, now, id))
  if (n != 1) stop(sprintf("no change point with id %s", id), call. = FALSE)
  invisible(TRUE)
}

# The stored change points, optionally of one schedule and in some states,
# newest first.
changepoints_list <- function(con, schedule = NULL, state = NULL) {
  need_schema(con, "changepoints")
  where <- character()
  params <- list()
  if (!is.null(schedule)) {
    where <- c(where, "schedule = ?")
    params <- c(params, list(schedule))
  }
  if (!is.null(state)) {
    where <- c(where, sprintf("state IN (%s)", paste(rep("?", length(state)), collapse = ", ")))
    params <- c(params, as.list(state))
  }
  sql <- paste("SELECT * FROM changepoints",
               if (length(where)) paste("WHERE", paste(where, collapse = " AND ")) else "",
               "ORDER BY created_at DESC, id DESC")
  if (length(params)) DBI::dbGetQuery(con, sql, params = params) else DBI::dbGetQuery(con, sql)
}
