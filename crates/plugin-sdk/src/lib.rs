//! Write a vcsim policy plugin: implement the trait, export it with one macro (placeholder).
