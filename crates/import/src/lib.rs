//! Reads BOINC's own files as vcsim scenarios (placeholder).
