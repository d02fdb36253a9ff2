//! A ledger of test values with destructors, shared by the attacks on the drop list
//! (`tail_attacks`, `adversarial_drops`): each value is registered when it is built and checked
//! when it is dropped (built once, dropped once, at an address aligned for its type, intact),
//! every drop is logged in order, and chosen destructors panic. Thread-local, so tests running
//! side by side keep their own ledgers.

use std::cell::RefCell;
use std::collections::BTreeSet;

/// Ids at or above this are zero-sized values, which cannot tell themselves apart: their drops
/// are logged, not tracked as live.
pub const UNTRACKED: u32 = 1_000_000;

thread_local! {
    /// The ids dropped, in order.
    pub static LOG: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// The ids built and not dropped yet.
    pub static LIVE: RefCell<BTreeSet<u32>> = const { RefCell::new(BTreeSet::new()) };
    static ERRORS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    static PANICS: RefCell<BTreeSet<u32>> = const { RefCell::new(BTreeSet::new()) };
}

fn err(s: String) {
    ERRORS.with(|e| e.borrow_mut().push(s));
}

/// Registers value `id` as built.
pub fn born(id: u32) {
    LIVE.with(|l| {
        if !l.borrow_mut().insert(id) {
            err(format!("id {id} built twice"));
        }
    });
}

/// Value `id`, at `addr` with its type's alignment `align`, is being dropped; `intact` says its
/// contents still check. Panics if `id` was chosen with [`panic_on`].
pub fn died(id: u32, addr: usize, align: usize, intact: bool) {
    if !intact {
        err(format!("id {id} corrupted at drop"));
    }
    if !addr.is_multiple_of(align) {
        err(format!(
            "id {id} dropped at misaligned {addr:#x} (align {align})"
        ));
    }
    if id < UNTRACKED {
        LIVE.with(|l| {
            if !l.borrow_mut().remove(&id) {
                err(format!(
                    "id {id} dropped but not live (double drop or never built)"
                ));
            }
        });
    }
    LOG.with(|l| l.borrow_mut().push(id));
    if PANICS.with(|p| p.borrow().contains(&id)) {
        panic!("destructor {id} panics");
    }
}

/// The ids dropped since the last call, in order.
pub fn take_log() -> Vec<u32> {
    LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

/// From now on, the destructors of `ids` (and no others) panic.
pub fn panic_on(ids: &[u32]) {
    PANICS.with(|p| *p.borrow_mut() = ids.iter().copied().collect());
}

/// Asserts that no drop so far went wrong.
#[track_caller]
pub fn check_no_errors() {
    let e = ERRORS.with(|e| std::mem::take(&mut *e.borrow_mut()));
    assert!(e.is_empty(), "{e:#?}");
}

/// No destructor panics any more, no drop went wrong, and nothing built is still live.
#[track_caller]
pub fn check_clean() {
    panic_on(&[]);
    check_no_errors();
    let live = LIVE.with(|l| std::mem::take(&mut *l.borrow_mut()));
    assert!(live.is_empty(), "never dropped: {live:?}");
}

/// The check word stored beside `id`.
pub const fn chk(id: u32) -> u32 {
    id.rotate_left(7) ^ 0x5A5A_A5A5
}

/// `ty!(Name, repr(align(64)); pad: u64)`: a type holding an id, its check word and padding
/// fields, registered in the ledger when built (`Name::new(id)`) and checked when dropped.
macro_rules! ty {
    ($name:ident $(, $attr:meta)?; $($pad:ident : $pt:ty),*) => {
        $(#[$attr])?
        struct $name {
            id: u32,
            c: u32,
            $(#[allow(dead_code)] // padding, never read
            $pad: $pt,)*
        }
        impl $name {
            fn new(id: u32) -> Self {
                $crate::arena::drop_ledger::born(id);
                $name { id, c: $crate::arena::drop_ledger::chk(id), $($pad: Default::default(),)* }
            }
        }
        impl Drop for $name {
            fn drop(&mut self) {
                $crate::arena::drop_ledger::died(
                    self.id,
                    self as *mut Self as usize,
                    align_of::<Self>(),
                    self.c == $crate::arena::drop_ledger::chk(self.id),
                );
            }
        }
    };
}
pub(crate) use ty;
