# stats/load.R: source every function file of stats/R (for the entry scripts).
local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  here <- if (length(f)) dirname(normalizePath(f[1])) else getwd()
  for (src in sort(list.files(file.path(here, "R"), pattern = "\\.R$", full.names = TRUE))) {
    source(src, local = globalenv())
  }
})
