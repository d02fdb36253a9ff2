//! Parsing `#[layout(...)]` with the shared helpers of [`crate::attr`]: every key keeps its span
//! and its value's span, and every mistake is recorded without stopping, so one build reports them
//! all.

use proc_macro2::Span;
use syn::{Attribute, Ident, LitInt, Path};

use crate::attr::{self, Attr};
use crate::ctxt::Ctxt;

const ATTR: &str = "layout";
/// The keys `#[layout(...)]` accepts, for the unknown-key message.
const KEYS: &str = "size, max_size, align, max_padding, optimal, report, crate";

/// The struct-level `#[layout(...)]` attributes of one input.
pub struct Container {
    /// The checks to generate, in the order written.
    pub assertions: Vec<Assertion>,
    /// `report`, with its span.
    pub report: Option<Span>,
    /// `crate = path`: where arena-kit is, for renamed dependencies.
    pub krate: Option<Path>,
}

/// A field's `#[layout(...)]`: there are no field keys, so a field carries nothing; an attribute
/// on one is reported where it is parsed.
pub struct Field;

/// One assertion such as `size = 16`.
pub struct Assertion {
    /// What is checked.
    pub kind: Kind,
    /// The key as written, for its span.
    pub key: Ident,
    /// The value as written (`16`), for its span; `None` for `optimal`.
    pub value: Option<LitInt>,
}

/// The kinds of layout assertion.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `size = N`
    Size,
    /// `max_size = N`
    MaxSize,
    /// `align = N`
    Align,
    /// `max_padding = N`
    MaxPadding,
    /// `optimal`
    Optimal,
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::Size,
        Kind::MaxSize,
        Kind::Align,
        Kind::MaxPadding,
        Kind::Optimal,
    ];

    /// The key, which is also the name of the check in arena-kit-core.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Size => "size",
            Kind::MaxSize => "max_size",
            Kind::Align => "align",
            Kind::MaxPadding => "max_padding",
            Kind::Optimal => "optimal",
        }
    }
}

impl Container {
    /// Parses every `#[layout(...)]` on the struct.
    pub fn from_ast(cx: &Ctxt, attrs: &[Attribute]) -> Self {
        let mut checks: Vec<Attr<'_, Assertion>> = Kind::ALL
            .iter()
            .map(|k| Attr::none(cx, ATTR, k.key()))
            .collect();
        // The order written, so errors and checks come out in the user's order.
        let mut order: Vec<Kind> = Vec::new();
        let mut report = Attr::none(cx, ATTR, "report");
        let mut krate = Attr::none(cx, ATTR, "crate");
        attr::each_key(cx, attrs, ATTR, |key, meta| {
            let kind = Kind::ALL.into_iter().find(|k| k.key() == key);
            match (key, kind) {
                ("crate", _) => krate.set_opt(&meta.path, attr::krate(cx, meta)?),
                ("report", _) => {
                    attr::reject_value(cx, meta)?;
                    report.set(&meta.path, meta.path.segments[0].ident.span());
                }
                (_, Some(kind)) => {
                    let ident = meta.path.segments[0].ident.clone();
                    let value = match kind {
                        Kind::Optimal => {
                            attr::reject_value(cx, meta)?;
                            Some(None)
                        }
                        Kind::Align => attr::align(cx, meta)?.map(|(lit, _)| Some(lit)),
                        _ => attr::int(cx, meta)?.map(|(lit, _)| Some(lit)),
                    };
                    let slot = &mut checks[kind as usize];
                    let first = !slot.is_set();
                    slot.set_opt(
                        &meta.path,
                        value.map(|value| Assertion {
                            kind,
                            key: ident,
                            value,
                        }),
                    );
                    if first && slot.is_set() {
                        order.push(kind);
                    }
                }
                _ => attr::unknown(cx, meta, ATTR, KEYS)?,
            }
            Ok(())
        });
        let mut checks: Vec<Option<Assertion>> = checks.into_iter().map(Attr::get).collect();
        Container {
            assertions: order
                .into_iter()
                .filter_map(|k| checks[k as usize].take())
                .collect(),
            report: report.get(),
            krate: krate.get(),
        }
    }
}

impl Field {
    /// Reports any `#[layout(...)]` on a field: it would be silently ignored.
    pub fn from_ast(cx: &Ctxt, field: &syn::Field) -> Self {
        for a in field.attrs.iter().filter(|a| a.path().is_ident(ATTR)) {
            cx.error_spanned_by(a, "#[layout(...)] goes on the struct, not on a field");
        }
        Field
    }
}
