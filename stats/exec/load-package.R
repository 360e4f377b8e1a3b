# stats/exec/load-package.R: sourced first by every rcuwb-*.R entry script
# of this folder: loads the package rcuwb (stats/: DESCRIPTION, NAMESPACE,
# R/*.R) from source with pkgload, so the scripts run from a checkout or an
# install (PREFIX/share/rcuwb/stats) alike.  Not an entry script itself.
local({
  # the entry script's folder (this one): Rscript's --file=
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  here <- if (length(f)) dirname(normalizePath(f[1])) else getwd()
  if (!requireNamespace("pkgload", quietly = TRUE)) {
    cat("rcuwb: R package 'pkgload' is not installed (make deps)\n", file = stderr())
    quit(save = "no", status = 64)
  }
  pkgload::load_all(file.path(here, ".."), helpers = FALSE, quiet = TRUE)
})
