//! Placeholder: the example dylib plugin is built in issue 8.
