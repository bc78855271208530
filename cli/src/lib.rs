//! grus: the user CLI (`grus submit`, `grus jobs`, `grus usage`, ...) and `grus dev`, which
//! runs the api and simulated agents in one process for a first try.
//! Not built yet: see the one-command-start issue.
