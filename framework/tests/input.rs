//! Reading a user's file: a pipe no program writes to is refused after 2 s, a
//! byte that is not UTF-8 is placed by line and column, and a file read is
//! known by any of its names (so that no output replaces it).

use std::path::PathBuf;
use vcsim_framework::input::{read_as, read_bounded, read_text};

/// A fresh temporary directory for one test.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vcsim-input-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[cfg(unix)]
#[test]
fn a_pipe_no_program_writes_to_is_refused_at_once() {
    let dir = temp_dir("fifo");
    let fifo = dir.join("scenario.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let e = read_bounded(&fifo, 1 << 20).unwrap_err();
    assert_eq!(
        e.to_string(),
        "an empty pipe that no program writes to (vcsim reads a pipe once, and waits 2 s at most for a writer)"
    );
    // Read once: a second read (a file is sniffed, then loaded) gives the
    // same answer without waiting for a writer again (`check` and `run`
    // waited 4 s).
    let again = std::time::Instant::now();
    let e2 = read_bounded(&fifo, 1 << 20).unwrap_err();
    assert_eq!(e2.to_string(), e.to_string());
    assert!(again.elapsed() < std::time::Duration::from_secs(1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_byte_that_is_not_utf8_is_placed_by_line_and_column() {
    let dir = temp_dir("utf8");
    let p = dir.join("s.toml");
    std::fs::write(&p, b"name = \"x\"\n# caf\xe9\n").unwrap();
    let e = read_text(&p, 1 << 20).unwrap_err();
    assert_eq!(
        e.to_string(),
        "not UTF-8 text: byte 0xe9 at line 2, column 6"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_read_is_known_by_any_of_its_names() {
    let dir = temp_dir("read-as");
    let (p, hard, other) = (dir.join("a.toml"), dir.join("b.toml"), dir.join("c.toml"));
    std::fs::write(&p, "x").unwrap();
    std::fs::write(&other, "y").unwrap();
    std::fs::hard_link(&p, &hard).unwrap();
    assert_eq!(read_as(&hard), None);
    read_text(&p, 10).unwrap();
    assert_eq!(read_as(&hard), Some(p.clone()));
    assert_eq!(read_as(&dir.join(".").join("a.toml")), Some(p.clone()));
    assert_eq!(read_as(&other), None);
    std::fs::remove_dir_all(&dir).unwrap();
}
