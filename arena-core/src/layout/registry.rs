//! The program-wide list of layouts behind [`snapshot`](super::snapshot) (the `layout-registry`
//! feature).
//!
//! `#[derive(Layout)]` on a struct without type parameters registers it; a generic struct has no
//! layout until it has type arguments, so list the instantiations you care about with
//! [`layouts!`](crate::layouts). The list holds every type registered anywhere in the program,
//! dependencies included, gathered before `main` by the `inventory` crate (on the targets it
//! supports: Linux, macOS, Windows, the BSDs, Android, iOS and WebAssembly).
//!
//! ```
//! use arena_kit::{Layout, layouts};
//!
//! #[derive(Layout)]
//! #[repr(C)]
//! struct Enemy { alive: bool, health: f64 }
//!
//! #[derive(Layout)]
//! struct Pair<T>(T, T);
//! layouts![Pair<u64>, Pair<u8>];
//!
//! let names: Vec<&str> = arena_kit::layout::registered().map(|r| r.name()).collect();
//! assert!(names.iter().any(|n| n.ends_with("::Enemy")));
//! assert!(names.iter().any(|n| n.ends_with("::Pair<u64>")));
//! ```

use super::StructLayout;

/// One type in the program-wide list: its name and its layout.
///
/// The name is the module the type was registered in and the type as written there
/// (`game::components::Enemy`, `game::Pair<u64>`), so it stays the same across compilers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Registered {
    name: &'static str,
    layout: Described,
}

/// The layout a [`Registered`] type has. More kinds of type (enums) may be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Described {
    /// A struct's layout.
    Struct(&'static StructLayout),
}

impl Registered {
    /// A struct registered under `name`.
    pub const fn of_struct(name: &'static str, layout: &'static StructLayout) -> Self {
        Registered {
            name,
            layout: Described::Struct(layout),
        }
    }

    /// The type's name: module path and type as written.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The type's layout.
    pub const fn layout(&self) -> Described {
        self.layout
    }

    /// `size_of` the type.
    pub const fn size(&self) -> usize {
        match self.layout {
            Described::Struct(l) => l.size(),
        }
    }

    /// `align_of` the type.
    pub const fn align(&self) -> usize {
        match self.layout {
            Described::Struct(l) => l.align(),
        }
    }

    /// The bytes no field holds.
    pub const fn padding(&self) -> usize {
        match self.layout {
            Described::Struct(l) => l.padding(),
        }
    }

    /// The smallest size the best field order would give.
    pub const fn best_size(&self) -> usize {
        match self.layout {
            Described::Struct(l) => l.min_size(),
        }
    }
}

inventory::collect!(Registered);

/// Every registered type, in no particular order ([`Snapshot`](super::snapshot::Snapshot)
/// sorts them by name).
pub fn registered() -> impl Iterator<Item = &'static Registered> {
    inventory::iter::<Registered>.into_iter()
}
