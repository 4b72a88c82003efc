//! Reading a user's file with a bound on its size, so that `/dev/zero`, a
//! stream that never ends or a file of gigabytes is refused at once rather
//! than filling memory; and without waiting long for a writer that may
//! never come, so that a named pipe no program writes to is refused rather
//! than hanging the command. A pipe is read once and its bytes kept,
//! so that a command reading its input twice (to tell its kind, then to
//! load it) reads the same text; and every file read is noted, so that an
//! output naming one of them (`--trace my.rhai`, a hard link, a BOINC file
//! beside the one named) is refused rather than written over it.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file as the file system knows it, whatever path names it.
#[cfg(unix)]
type FileId = (u64, u64);
#[cfg(not(unix))]
type FileId = PathBuf;

#[cfg(unix)]
fn file_id(_path: &Path, m: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn file_id(path: &Path, _: &std::fs::Metadata) -> FileId {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// The files this process read (each with the path it was read by), and
/// the bytes of each pipe read, by the path it was read by.
static READ: Mutex<Vec<(PathBuf, FileId)>> = Mutex::new(Vec::new());
static PIPES: Mutex<Vec<(PathBuf, Vec<u8>)>> = Mutex::new(Vec::new());

/// The path by which this process read the file `path` names, if it read
/// it (by any name: a link, `./`, another hard link). An output there
/// would replace an input.
pub fn read_as(path: &Path) -> Option<PathBuf> {
    let m = std::fs::metadata(path).ok()?;
    let id = file_id(path, &m);
    let read = READ.lock().unwrap_or_else(|e| e.into_inner());
    // The path read must still name that file: a file removed since may
    // have left its inode to another.
    read.iter()
        .find(|(p, i)| *i == id && std::fs::metadata(p).is_ok_and(|m| file_id(p, &m) == id))
        .map(|(p, _)| p.clone())
}

/// The most bytes read of a scenario, sweep, search space or script.
pub const MAX_TEXT_BYTES: u64 = 16 << 20;
/// The most bytes read of a BOINC file (a client_state.xml of a host with
/// thousands of tasks is tens of MB).
pub const MAX_IMPORT_BYTES: u64 = 256 << 20;
/// The most bytes read of a shard's results or trail when merging (a
/// million runs, a process's most, of about 200 bytes each).
pub const MAX_RESULTS_BYTES: u64 = 1 << 30;

/// Notes that this process reads the file at `path` by other means (a
/// plugin library), so that no output replaces it (see [`read_as`]).
pub fn note_read(path: &Path) {
    if let Ok(m) = std::fs::metadata(path) {
        note(path, &m);
    }
}

fn note(path: &Path, meta: &std::fs::Metadata) {
    if meta.is_file() {
        let id = file_id(path, meta);
        let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
        if !read.iter().any(|(p, i)| *i == id && p == path) {
            read.push((path.to_path_buf(), id));
        }
    }
}

/// The file's bytes, or an error if it holds more than `max` (the message
/// says the bound; callers prefix the path).
pub fn read_bounded(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let pipes = || PIPES.lock().unwrap_or_else(|e| e.into_inner());
    let empty_pipe = || {
        io::Error::other(format!(
            "an empty pipe that no program writes to (vcsim reads a pipe once, and waits {PIPE_WRITER_WAIT_SECONDS} s at most for a writer)"
        ))
    };
    // A pipe is read once: its bytes, or its having none, are kept (a file
    // sniffed before it is loaded waited for a writer twice, 4 s).
    if let Some((_, bytes)) = pipes().iter().find(|(p, _)| p == path) {
        return if bytes.is_empty() {
            Err(empty_pipe())
        } else {
            Ok(bytes.clone())
        };
    }
    let (file, pipe) = open(path)?;
    note(path, &file.metadata()?);
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if pipe && bytes.len() as u64 <= max {
        pipes().push((path.to_path_buf(), bytes.clone()));
    }
    if pipe && bytes.is_empty() {
        return Err(empty_pipe());
    }
    if bytes.len() as u64 > max {
        return Err(io::Error::other(format!(
            "larger than {} MB, the most vcsim reads of such a file",
            max >> 20
        )));
    }
    Ok(bytes)
}

/// How long a pipe that no program has open to write is waited for: a
/// writer already waiting to open it (`writer > fifo &`) comes at once.
pub const PIPE_WRITER_WAIT_SECONDS: i64 = 2;

/// The file opened to read, and whether it is a pipe. Opening a pipe waits
/// for a writer, for ever if none comes: it is opened without waiting, and
/// a writer is waited for [`PIPE_WRITER_WAIT_SECONDS`] at most (a writer
/// already there, as `<(sed ...)`'s, is read as a file's).
#[cfg(unix)]
fn open(path: &Path) -> io::Result<(std::fs::File, bool)> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    use rustix::fs::{fcntl_getfl, fcntl_setfl, Mode, OFlags};
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let file = std::fs::File::from(fd);
    let pipe = std::os::unix::fs::FileTypeExt::is_fifo(&file.metadata()?.file_type());
    if pipe {
        // Until a writer writes or closes: Linux reports no hang-up on a
        // pipe no writer has opened since, so this waits for one.
        let mut fds = [PollFd::new(&file, PollFlags::IN)];
        let wait = Timespec {
            tv_sec: PIPE_WRITER_WAIT_SECONDS,
            tv_nsec: 0,
        };
        loop {
            match poll(&mut fds, Some(&wait)) {
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
                Ok(_) => break,
            }
        }
    }
    fcntl_setfl(&file, fcntl_getfl(&file)? - OFlags::NONBLOCK)?;
    Ok((file, pipe))
}

#[cfg(not(unix))]
fn open(path: &Path) -> io::Result<(std::fs::File, bool)> {
    Ok((std::fs::File::open(path)?, false))
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read_bounded(path, max)?).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        // The text before the bad byte is UTF-8: its lines and characters
        // place it as an editor does.
        let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text: byte 0x{:02x} at line {line}, column {column}",
                bytes[at]
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_stream_is_refused_after_the_bound() {
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert_eq!(
            e.to_string(),
            "larger than 1 MB, the most vcsim reads of such a file"
        );
    }

    #[test]
    fn a_file_within_the_bound_is_read_whole() {
        let p = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"));
        let text = read_text(p, MAX_TEXT_BYTES).unwrap();
        assert!(text.starts_with("[package]"), "{text}");
        let n = text.len() as u64;
        assert_eq!(read_text(p, n).unwrap(), text);
        assert!(read_text(p, n - 1).is_err());
    }
}
