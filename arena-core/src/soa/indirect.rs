//! Indirect sorts: the sorted order of the rows as `u32` indices, without moving any row
//! ([`SoaSlice::sort_indices_by`]: a render order, a draw list), and a checked way to apply such
//! an order to the columns later ([`SoaSliceMut::apply_permutation`],
//! [`SoaVec::apply_permutation`](super::SoaVec::apply_permutation)).

use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Ordering;
use core::fmt;

use super::{Columns, Soa, SoaSlice, SoaSliceMut};
use crate::or_panic::OrPanic;

/// A row count an index list of `u32`s cannot name: more than `u32::MAX + 1` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyRows {
    /// The rows there are.
    pub len: usize,
}

impl fmt::Display for TooManyRows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} rows cannot be named by u32 indices (at most 2^32); sort the rows themselves \
             (sort_by) or a part of them at a time",
            self.len
        )
    }
}

impl core::error::Error for TooManyRows {}

/// Why an index list is not a permutation of the rows: what [`apply_permutation`](SoaSliceMut::apply_permutation)
/// refuses, having changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PermutationError {
    /// The list has another length than there are rows.
    Length {
        /// The rows there are.
        rows: usize,
        /// The indices given.
        indices: usize,
    },
    /// An index names no row.
    OutOfRange {
        /// Where in the list.
        position: usize,
        /// The index.
        index: u32,
        /// The rows there are.
        rows: usize,
    },
    /// An index appears twice (so another is missing).
    Repeated {
        /// Where in the list its second appearance is.
        position: usize,
        /// The index.
        index: u32,
    },
}

impl fmt::Display for PermutationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fix = "pass each row index below the row count exactly once (as sort_indices_by \
                   returns them)";
        match *self {
            PermutationError::Length { rows, indices } => write!(
                f,
                "{indices} indices for {rows} rows: not a permutation; {fix}"
            ),
            PermutationError::OutOfRange {
                position,
                index,
                rows,
            } => write!(
                f,
                "index {index} at position {position} names no row (there are {rows}); {fix}"
            ),
            PermutationError::Repeated { position, index } => write!(
                f,
                "index {index} appears again at position {position}: not a permutation; {fix}"
            ),
        }
    }
}

impl core::error::Error for PermutationError {}

/// `indices` as row numbers, if they are a permutation of `0..rows`.
pub(crate) fn check_permutation(
    rows: usize,
    indices: &[u32],
) -> Result<Vec<usize>, PermutationError> {
    if indices.len() != rows {
        return Err(PermutationError::Length {
            rows,
            indices: indices.len(),
        });
    }
    let mut seen = vec![0u64; rows.div_ceil(64)];
    let mut order = Vec::with_capacity(rows);
    for (position, &index) in indices.iter().enumerate() {
        let i = index as usize;
        if i >= rows {
            return Err(PermutationError::OutOfRange {
                position,
                index,
                rows,
            });
        }
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        if seen[word] & bit != 0 {
            return Err(PermutationError::Repeated { position, index });
        }
        seen[word] |= bit;
        order.push(i);
    }
    Ok(order)
}

impl<'a, T: Soa + 'a> SoaSlice<'a, T> {
    /// The rows' stable sorted order under `compare`, as indices (`result[k]` is the row that
    /// sorts `k`th), moving no row: a draw order or a ranking over data that stays put. Apply
    /// it later with [`apply_permutation`](SoaSliceMut::apply_permutation) if the rows should
    /// move after all.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Sprite { depth: f32, id: u32 }
    ///
    /// let sprites: SoaVec<Sprite> =
    ///     [3.0, 1.0, 2.0].into_iter().zip(0..).map(|(depth, id)| Sprite { depth, id }).collect();
    /// let back_to_front = sprites.sort_indices_by(|a, b| b.depth.total_cmp(a.depth));
    /// assert_eq!(back_to_front, [0, 2, 1]);
    /// assert_eq!(sprites.slices().id, &[0, 1, 2]); // nothing moved
    /// ```
    ///
    /// # Panics
    /// If there are more rows than `u32` indices can name (see
    /// [`try_sort_indices_by`](Self::try_sort_indices_by)), or if `compare` panics (nothing
    /// moved then either).
    #[track_caller]
    pub fn sort_indices_by<F>(&self, compare: F) -> Vec<u32>
    where
        F: for<'r> FnMut(T::Ref<'r>, T::Ref<'r>) -> Ordering,
    {
        self.try_sort_indices_by(compare)
            .or_panic("sort_indices_by: ")
    }

    /// As [`sort_indices_by`](Self::sort_indices_by), or [`TooManyRows`] (before `compare` is
    /// called) for more than 2^32 rows.
    pub fn try_sort_indices_by<F>(&self, mut compare: F) -> Result<Vec<u32>, TooManyRows>
    where
        F: for<'r> FnMut(T::Ref<'r>, T::Ref<'r>) -> Ordering,
    {
        let mut order = self.index_list()?;
        let cols = self.cols;
        order.sort_by(|&a, &b| {
            // SAFETY: every index is below `len`, an initialised row shared for `'a`.
            let (ra, rb) = unsafe { (cols.get(a as usize), cols.get(b as usize)) };
            compare(T::view(ra), T::view(rb))
        });
        Ok(order)
    }

    /// The rows' stable sorted order by a key computed once per row, as indices (see
    /// [`sort_indices_by`](Self::sort_indices_by)).
    ///
    /// # Panics
    /// If there are more rows than `u32` indices can name, or if `key` panics.
    #[track_caller]
    pub fn sort_indices_by_key<K: Ord, F>(&self, key: F) -> Vec<u32>
    where
        F: FnMut(T::Ref<'_>) -> K,
    {
        self.try_sort_indices_by_key(key)
            .or_panic("sort_indices_by_key: ")
    }

    /// As [`sort_indices_by_key`](Self::sort_indices_by_key), or [`TooManyRows`] (before `key`
    /// is called) for more than 2^32 rows.
    pub fn try_sort_indices_by_key<K: Ord, F>(&self, key: F) -> Result<Vec<u32>, TooManyRows>
    where
        F: FnMut(T::Ref<'_>) -> K,
    {
        // Up to the last index, not `0..`: at exactly 2^32 rows that would step past `u32::MAX`.
        let last = self.last_index()?;
        let mut keyed: Vec<(K, u32)> = self.iter().map(key).zip(0..=last).collect();
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(keyed.into_iter().map(|(_, i)| i).collect())
    }

    /// The last row's index as a `u32` (0 for no rows), or [`TooManyRows`] past 2^32 rows.
    fn last_index(&self) -> Result<u32, TooManyRows> {
        u32::try_from(self.len.saturating_sub(1)).map_err(|_| TooManyRows { len: self.len })
    }

    /// `0..len` as `u32`s.
    fn index_list(&self) -> Result<Vec<u32>, TooManyRows> {
        let end = self.last_index()?;
        Ok(if self.len == 0 {
            Vec::new()
        } else {
            (0..=end).collect()
        })
    }
}

impl<'a, T: Soa + 'a> SoaSliceMut<'a, T> {
    /// Moves the rows into the order `indices` gives (row `k` becomes the old row
    /// `indices[k]`, the meaning of [`sort_indices_by`](SoaSlice::sort_indices_by)'s result):
    /// each column is gathered once, through a scratch block. Refused with a
    /// [`PermutationError`], changing nothing, unless `indices` names every row exactly once.
    ///
    /// ```
    /// use arena_kit::{Soa, SoaVec};
    ///
    /// #[derive(Soa)]
    /// struct Unit { hp: u32, team: u8 }
    ///
    /// let mut units: SoaVec<Unit> =
    ///     [(5, 1), (9, 0), (7, 1)].map(|(hp, team)| Unit { hp, team }).into();
    /// let by_team = units.sort_indices_by_key(|u| *u.team);
    /// units.as_soa_slice_mut().apply_permutation(&by_team).unwrap();
    /// assert_eq!(units.slices().hp, &[9, 5, 7]);
    /// assert!(units.as_soa_slice_mut().apply_permutation(&[0, 0, 1]).is_err());
    /// ```
    pub fn apply_permutation(&mut self, indices: &[u32]) -> Result<(), PermutationError> {
        let order = check_permutation(self.len, indices)?;
        // SAFETY: `order` is a permutation of `0..len` (just checked), all initialised rows,
        // exclusively borrowed through `self`.
        unsafe { super::raw::permute::<T>(self.cols, &order) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_names_the_first_problem() {
        assert_eq!(check_permutation(3, &[2, 0, 1]), Ok(vec![2, 0, 1]));
        assert_eq!(check_permutation(0, &[]), Ok(vec![]));
        assert_eq!(
            check_permutation(3, &[2, 0]),
            Err(PermutationError::Length {
                rows: 3,
                indices: 2
            })
        );
        assert_eq!(
            check_permutation(3, &[2, 3, 1]),
            Err(PermutationError::OutOfRange {
                position: 1,
                index: 3,
                rows: 3
            })
        );
        assert_eq!(
            check_permutation(3, &[1, 0, 1]),
            Err(PermutationError::Repeated {
                position: 2,
                index: 1
            })
        );
        // Past one bitmap word.
        let big: Vec<u32> = (0..130).rev().collect();
        assert_eq!(check_permutation(130, &big).unwrap()[0], 129);
        let mut twice = big.clone();
        twice[129] = 64;
        assert!(matches!(
            check_permutation(130, &twice),
            Err(PermutationError::Repeated { index: 64, .. })
        ));
    }
}
