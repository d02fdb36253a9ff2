//! The program-wide list of layouts behind [`snapshot`](super::snapshot) (the `layout-registry`
//! feature).
//!
//! `#[derive(Layout)]` on a struct or an enum without type parameters registers it; a generic
//! type has no layout until it has type arguments, so list the instantiations you care about
//! with [`layouts!`](crate::layouts) (structs) or `layouts![enum Slot<u32>]` (enums). The list holds every type registered anywhere in the program,
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

use super::{EnumLayout, StructLayout};

/// One type in the program-wide list: its name and its layout.
///
/// The name is the module the type was registered in and the type as written there
/// (`game::components::Enemy`, `game::Pair<u64>`), so it stays the same across compilers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Registered {
    name: &'static str,
    layout: Described,
}

/// The layout a [`Registered`] type has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Described {
    /// A struct's layout.
    Struct(&'static StructLayout),
    /// An enum's layout.
    Enum(&'static EnumLayout),
}

impl Registered {
    /// A struct registered under `name`.
    pub const fn of_struct(name: &'static str, layout: &'static StructLayout) -> Self {
        Registered {
            name,
            layout: Described::Struct(layout),
        }
    }

    /// An enum registered under `name`.
    pub const fn of_enum(name: &'static str, layout: &'static EnumLayout) -> Self {
        Registered {
            name,
            layout: Described::Enum(layout),
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
            Described::Enum(l) => l.size(),
        }
    }

    /// `align_of` the type.
    pub const fn align(&self) -> usize {
        match self.layout {
            Described::Struct(l) => l.align(),
            Described::Enum(l) => l.align(),
        }
    }

    /// The bytes no field holds.
    pub const fn padding(&self) -> usize {
        match self.layout {
            Described::Struct(l) => l.padding(),
            Described::Enum(l) => l.padding(),
        }
    }

    /// The smallest size the layout's own advice gives: for a struct the best field order, for
    /// an enum boxing the variant its report names (its size when there is none).
    pub const fn best_size(&self) -> usize {
        match self.layout {
            Described::Struct(l) => l.min_size(),
            Described::Enum(l) => l.best_size(),
        }
    }
}

inventory::collect!(Registered);

/// Every registered type, in no particular order ([`Snapshot`](super::snapshot::Snapshot)
/// sorts them by name).
pub fn registered() -> impl Iterator<Item = &'static Registered> {
    inventory::iter::<Registered>.into_iter()
}
