# Small helpers shared by the other files.

`%||%` <- function(a, b) if (is.null(a) || length(a) == 0) b else a

# Evaluate `expr` with a fixed RNG seed and RNG kinds, then restore the
# caller's RNG state, so results do not depend on (or disturb) global state.
with_seed <- function(seed, expr) {
  env <- globalenv()
  had_seed <- exists(".Random.seed", envir = env, inherits = FALSE)
  old_seed <- if (had_seed) get(".Random.seed", envir = env) else NULL
  old_kind <- RNGkind()
  on.exit({
    RNGkind(old_kind[1], old_kind[2], old_kind[3])
    if (had_seed) {
      assign(".Random.seed", old_seed, envir = env)
    } else if (exists(".Random.seed", envir = env, inherits = FALSE)) {
      rm(".Random.seed", envir = env)
    }
  })
  set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion",
           sample.kind = "Rejection")
  expr
}

# Split a cell key such as "v4-n2/expedited/w2-r0" into its "/" segments.
cell_segments <- function(cell) strsplit(as.character(cell), "/", fixed = TRUE)

# The cell key with its GP-mode segment replaced by "*", used to pair the
# expedited and normal cells of the same topology and parameters:
# "v4-n2/expedited/w2-r0" -> "v4-n2/*/w2-r0".
# The holdoff segment ("h0", "h2") becomes "h*" too: under holdoff "boot"
# the two modes get different holdoffs.
cell_pair_key <- function(cell) {
  vapply(cell_segments(cell), function(s) {
    s <- ifelse(s %in% c("normal", "expedited"), "*", s)
    paste(sub("^h([0-9]+|[?])(-wh[0-9]+)?$", "h*\\2", s), collapse = "/")
  }, character(1))
}

# TRUE where the kernel boot parameters set rcupdate.rcu_normal to non-zero.
parse_rcu_normal <- function(boot_params) {
  bp <- ifelse(is.na(boot_params), "", boot_params)
  m <- regmatches(bp, regexpr("(^|[[:space:]])rcupdate\\.rcu_normal=[^[:space:]]*", bp))
  val <- rep(NA_character_, length(bp))
  hit <- grepl("(^|[[:space:]])rcupdate\\.rcu_normal=", bp)
  val[hit] <- sub(".*=", "", m)
  !is.na(val) & grepl("^([1-9][0-9]*|[yY])$", val)
}

# Geometric mean of the positive, finite values (NA if none).
geomean <- function(x) {
  x <- x[is.finite(x) & x > 0]
  if (!length(x)) NA_real_ else exp(mean(log(x)))
}
