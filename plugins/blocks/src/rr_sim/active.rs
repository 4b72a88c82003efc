//! A project's active jobs in the simulation, the next to finish first: a
//! priority queue that costs O(1) where keys arrive in order, as they do.
//!
//! A job's key is its remaining time plus its project's work done when it
//! became active. Jobs become active in list order, and a project's jobs of
//! one app have equal estimates while the work done only grows, so later
//! keys are rarely less than earlier ones: those go to the back of a sorted
//! run (`run`), and only the others to a heap. The least of the two fronts
//! is the least of all, so the order is a single heap's, ties included
//! (keys are distinct pairs: a job's index is in its key).

use crate::key::Key;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Default)]
pub(super) struct ActiveJobs {
    /// Keys in increasing order from `head` (those before it are taken:
    /// cleared with the simulation, so a plain vector serves).
    run: Vec<(Key, usize)>,
    head: usize,
    /// Keys that arrived below the run's last.
    heap: BinaryHeap<Reverse<(Key, usize)>>,
}

impl ActiveJobs {
    pub(super) fn clear(&mut self) {
        self.run.clear();
        self.head = 0;
        self.heap.clear();
    }

    pub(super) fn push(&mut self, key: (Key, usize)) {
        match self.run.last() {
            Some(&last) if self.head < self.run.len() && key < last => self.heap.push(Reverse(key)),
            _ => self.run.push(key),
        }
    }

    /// The least key.
    pub(super) fn peek(&self) -> Option<(Key, usize)> {
        match (self.run.get(self.head), self.heap.peek()) {
            (Some(&a), Some(&Reverse(b))) => Some(a.min(b)),
            (Some(&a), None) => Some(a),
            (None, Some(&Reverse(b))) => Some(b),
            (None, None) => None,
        }
    }

    /// Takes out job `k`: the least key's, or (a guard) wherever it is.
    pub(super) fn remove(&mut self, k: usize) {
        if self.run.get(self.head).is_some_and(|&(_, j)| j == k) {
            self.head += 1;
        } else if self.heap.peek().is_some_and(|&Reverse((_, j))| j == k) {
            self.heap.pop();
        } else {
            let head = self.head;
            if let Some(i) = self.run[head..].iter().position(|&(_, j)| j == k) {
                self.run.remove(head + i);
            }
            self.heap.retain(|&Reverse((_, j))| j != k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pops in a single heap's order, whatever order the keys arrive in.
    #[test]
    fn pops_in_a_heaps_order() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for round in 0..200 {
            let mut ours = ActiveJobs::default();
            let mut heap = BinaryHeap::new();
            for k in 0..(round % 9) {
                let key = (Key((next() % 50) as f64), k);
                ours.push(key);
                heap.push(Reverse(key));
            }
            let mut id = 100;
            for _ in 0..300 {
                match next() % 3 {
                    // Mostly increasing keys, as the simulation's are.
                    0 | 1 => {
                        let base = heap.peek().map_or(0.0, |Reverse((Key(x), _))| *x);
                        let key = (Key(base + (next() % 20) as f64 - 3.0), id);
                        id += 1;
                        ours.push(key);
                        heap.push(Reverse(key));
                    }
                    _ => {
                        assert_eq!(ours.peek(), heap.peek().map(|r| r.0));
                        if let Some(Reverse((_, k))) = heap.pop() {
                            ours.remove(k);
                        }
                    }
                }
            }
            while let Some(Reverse(key)) = heap.pop() {
                assert_eq!(ours.peek(), Some(key));
                ours.remove(key.1);
            }
            assert_eq!(ours.peek(), None);
        }
    }

    #[test]
    fn removes_a_job_that_is_not_next() {
        let mut a = ActiveJobs::default();
        for k in 0..3 {
            a.push((Key(k as f64 + 1.0), k));
        }
        a.push((Key(0.5), 3));
        a.remove(1);
        a.remove(3);
        assert_eq!(a.peek(), Some((Key(1.0), 0)));
        a.remove(0);
        assert_eq!(a.peek(), Some((Key(3.0), 2)));
    }
}
