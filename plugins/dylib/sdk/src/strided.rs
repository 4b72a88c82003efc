//! Safe access to the host's arrays and strings.
//!
//! An array crosses the ABI with its element stride, which may be larger
//! than the element type the plugin knows (a host of a later minor version
//! passes longer elements): [`Strided`] reads element `i` at `i * stride`
//! bytes, so a plugin reads the prefix it knows of each element. This
//! module and `__shims` are the SDK's only unsafe code.

use crate::abi;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Index;

/// A borrowed array of `T` whose elements are `stride` bytes apart: a
/// slice for reading, with `len`, `get`, `iter` and indexing.
pub struct Strided<'a, T> {
    ptr: *const u8,
    len: usize,
    stride: usize,
    _borrow: PhantomData<&'a [T]>,
}

impl<T> Clone for Strided<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Strided<'_, T> {}

// SAFETY: a `Strided` is a shared borrow of `T`s, like `&[T]`: it can be
// sent or shared between threads exactly when `&T` can, i.e. if `T: Sync`.
unsafe impl<T: Sync> Send for Strided<'_, T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Sync> Sync for Strided<'_, T> {}

impl<'a, T> Strided<'a, T> {
    /// The elements of a slice (stride: the size of `T`). For tests, and
    /// for values a plugin builds itself.
    pub fn from_slice(s: &'a [T]) -> Strided<'a, T> {
        Strided {
            ptr: s.as_ptr() as *const u8,
            len: s.len(),
            stride: std::mem::size_of::<T>(),
            _borrow: PhantomData,
        }
    }

    /// The host's array `a`.
    ///
    /// Panics (a panic the shims turn into an error of the call) if the
    /// stride is smaller than a `T` or misaligned: host and plugin would
    /// then disagree on the ABI.
    ///
    /// # Safety
    /// `a.ptr` points to `a.len` elements `a.stride` bytes apart, each
    /// starting with a valid `T`, all valid for reading during `'a`.
    pub(crate) unsafe fn from_abi(a: &abi::Array<T>, what: &str) -> Strided<'a, T> {
        if a.len == 0 {
            return Strided::from_slice(&[]);
        }
        let (size, align) = (std::mem::size_of::<T>(), std::mem::align_of::<T>());
        assert!(
            a.stride >= size
                && a.stride.is_multiple_of(align)
                && (a.ptr as usize).is_multiple_of(align),
            "vcsim passed {what} with a stride of {} bytes (at {:p}); this plugin's elements \
             are {size} bytes, aligned to {align}: host and plugin disagree on the ABI",
            a.stride,
            a.ptr
        );
        Strided {
            ptr: a.ptr as *const u8,
            len: a.len,
            stride: a.stride,
            _borrow: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i`, if `i < len`.
    pub fn get(&self, i: usize) -> Option<&'a T> {
        if i < self.len {
            // SAFETY: `i < len`; the constructor's contract says element `i`
            // starts `i * stride` bytes after `ptr` with a valid, aligned
            // `T` borrowed for `'a` (checked: stride and pointer aligned).
            Some(unsafe { &*(self.ptr.add(i * self.stride) as *const T) })
        } else {
            None
        }
    }

    /// Element `i`, borrowed for `'a`; panics if `i >= len` (as indexing).
    pub(crate) fn at(&self, i: usize) -> &'a T {
        match self.get(i) {
            Some(x) => x,
            None => panic!("index {i} out of range for an array of {}", self.len),
        }
    }

    pub fn first(&self) -> Option<&'a T> {
        self.get(0)
    }

    pub fn last(&self) -> Option<&'a T> {
        self.len.checked_sub(1).and_then(|i| self.get(i))
    }

    /// The elements in order.
    pub fn iter(&self) -> Iter<'a, T> {
        Iter {
            s: *self,
            front: 0,
            back: self.len,
        }
    }

    /// The elements `start..end` (clamped to the array).
    pub fn range(&self, start: usize, end: usize) -> Strided<'a, T> {
        let end = end.min(self.len);
        let start = start.min(end);
        Strided {
            // A pointer one past the end is fine when the range is empty:
            // `get` never reads it.
            ptr: self.ptr.wrapping_add(start * self.stride),
            len: end - start,
            stride: self.stride,
            _borrow: PhantomData,
        }
    }
}

impl<T> Index<usize> for Strided<'_, T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        self.at(i)
    }
}

impl<T: fmt::Debug> fmt::Debug for Strided<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, T> IntoIterator for Strided<'a, T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &Strided<'a, T> {
    type Item = &'a T;
    type IntoIter = Iter<'a, T>;
    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

/// The iterator of a [`Strided`].
pub struct Iter<'a, T> {
    s: Strided<'a, T>,
    front: usize,
    back: usize,
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            s: self.s,
            front: self.front,
            back: self.back,
        }
    }
}

impl<'a, T> Iterator for Iter<'a, T> {
    type Item = &'a T;
    fn next(&mut self) -> Option<&'a T> {
        if self.front < self.back {
            self.front += 1;
            self.s.get(self.front - 1)
        } else {
            None
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.back - self.front;
        (n, Some(n))
    }
    fn nth(&mut self, n: usize) -> Option<&'a T> {
        self.front = self.front.saturating_add(n).min(self.back);
        self.next()
    }
}

impl<'a, T> DoubleEndedIterator for Iter<'a, T> {
    fn next_back(&mut self) -> Option<&'a T> {
        if self.front < self.back {
            self.back -= 1;
            self.s.get(self.back)
        } else {
            None
        }
    }
}

impl<T> ExactSizeIterator for Iter<'_, T> {}

impl<T> std::iter::FusedIterator for Iter<'_, T> {}

/// A string of a host view, borrowed as long as the view element `_owner`
/// that holds it.
///
/// Sound because every `abi::Str` the SDK reads sits in a view the host
/// passed (ABI rule 5: valid UTF-8 for the call) and `_owner` is borrowed
/// from that view: the SDK never calls this on a `Str` a plugin made.
pub(crate) fn str_in<O: ?Sized>(_owner: &O, s: abi::Str) -> &str {
    if s.ptr.is_null() || s.len == 0 {
        return "";
    }
    // SAFETY: see above: `s` points to `s.len` bytes valid while `_owner`
    // (part of the same host view) is.
    let b = unsafe { std::slice::from_raw_parts(s.ptr, s.len) };
    std::str::from_utf8(b).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job as a host of a later minor version might pass it: the 2.0
    /// fields, then one more.
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct LaterJob {
        job: abi::Job,
        reason: u64,
    }

    #[test]
    fn longer_elements_are_read_by_their_prefix() {
        let host: Vec<LaterJob> = (0..5)
            .map(|i| LaterJob {
                job: abi::Job {
                    id: 10 + i,
                    cpus: i as f64,
                    ..Default::default()
                },
                reason: 99,
            })
            .collect();
        let a = abi::Array {
            ptr: host.as_ptr() as *const abi::Job,
            len: host.len(),
            stride: std::mem::size_of::<LaterJob>(),
        };
        // SAFETY: `host` holds 5 elements `stride` apart, each starting with a Job.
        let s = unsafe { Strided::from_abi(&a, "jobs") };
        assert_eq!(s.len(), 5);
        assert_eq!(s[3].id, 13);
        assert_eq!(s.get(4).map(|j| j.cpus), Some(4.0));
        assert!(s.get(5).is_none());
        let ids: Vec<u64> = s.iter().map(|j| j.id).collect();
        assert_eq!(ids, [10, 11, 12, 13, 14]);
        let back: Vec<u64> = s.iter().rev().map(|j| j.id).collect();
        assert_eq!(back, [14, 13, 12, 11, 10]);
        assert_eq!(s.iter().len(), 5);
        assert_eq!(s.iter().nth(2).map(|j| j.id), Some(12));
        let r = s.range(1, 3);
        assert_eq!(r.iter().map(|j| j.id).collect::<Vec<_>>(), [11, 12]);
        assert!(s.range(7, 9).is_empty());
        assert_eq!(s.last().map(|j| j.id), Some(14));
    }

    #[test]
    #[should_panic(expected = "disagree on the ABI")]
    fn a_stride_shorter_than_the_element_is_refused() {
        let jobs = [abi::Job::default(); 2];
        let a = abi::Array {
            ptr: jobs.as_ptr(),
            len: 2,
            stride: 8,
        };
        // SAFETY: never read: the stride is refused first.
        let _ = unsafe { Strided::from_abi(&a, "jobs") };
    }

    #[test]
    fn slices_are_strided_too() {
        let xs = [1u32, 2, 3];
        let s = Strided::from_slice(&xs);
        assert_eq!(s.iter().copied().sum::<u32>(), 6);
        assert_eq!(format!("{s:?}"), "[1, 2, 3]");
        let empty: Strided<u32> = Strided::from_slice(&[]);
        assert!(empty.first().is_none() && empty.last().is_none());
    }
}
