# Column names that the plots (R/plots.R, R/calibrate.R) name inside
# ggplot2::aes(): data, not variables of the package; declared so that
# R CMD check does not take them for undefined globals.
utils::globalVariables(c(
  "dead", "est", "fill", "frac", "hi", "intended", "label", "line", "lo", "median", "n",
  "phase", "position", "prim", "run_id", "side", "slowdown", "slowdown_hi", "slowdown_lo", "stage_label",
  "us", "value", "variant", "vcpus", "verdict", "what", "y"
))
