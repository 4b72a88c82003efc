//! Loads vcsim policy plugins from dylibs (placeholder).
