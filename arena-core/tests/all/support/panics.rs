//! The binary's one panic hook for the tests that panic on purpose. A test plans a panic (from a
//! callback, a `Clone`, a `Drop`, an iterator) with [`planned_panic`], whose payload is a
//! [`Planned`]: the hook does not report it. [`panic_location`] listens for the panics of a
//! closure instead, and keeps their location rather than printing them. Every other panic goes on
//! to the hook installed before (std's, which prints it as usual).
//!
//! Quiet, because the tests plan hundreds of panics, and under Miri the default hook's report of
//! each (location, message, backtrace note, written to stderr) took a twelfth of a module's time
//! and checks nothing.

use std::borrow::Cow;
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

/// The payload of a panic a test planned; what it says is for a reader of a failure only (the
/// hook recognises the type).
#[derive(Debug)]
pub struct Planned(pub Cow<'static, str>);

thread_local! {
    /// While [`panic_location`] listens on this thread: where its last panic happened.
    static LISTENING: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the hook (once for the binary), chaining to the one before it.
fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().is::<Planned>() {
                return;
            }
            let listening = LISTENING.with(|l| {
                let mut l = l.borrow_mut();
                if let Some(at) = l.as_mut() {
                    *at = info
                        .location()
                        .map(|l| format!("{}:{}", l.file(), l.line()))
                        .unwrap_or_default();
                }
                l.is_some()
            });
            if !listening {
                prev(info);
            }
        }));
    });
}

/// Panics with a [`Planned`] payload saying `what`, which the hook does not report.
pub fn planned_panic(what: impl Into<Cow<'static, str>>) -> ! {
    install();
    std::panic::panic_any(Planned(what.into()))
}

/// The file and line a panic inside `f` reports (its `Location`), without printing it. Panics if
/// `f` does not.
pub fn panic_location(f: impl FnOnce()) -> String {
    install();
    LISTENING.with(|l| *l.borrow_mut() = Some(String::new()));
    let r = catch_unwind(AssertUnwindSafe(f));
    let at = LISTENING
        .with(|l| l.borrow_mut().take())
        .unwrap_or_default();
    assert!(r.is_err(), "no panic");
    at
}
