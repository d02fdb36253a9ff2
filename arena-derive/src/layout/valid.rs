//! The rules a `#[derive(Layout)]` input must follow, one function per rule, each with a message
//! that says what to do instead.

use crate::ast::InputData;
use crate::ctxt::Ctxt;
use syn::ext::IdentExt;

use super::Input;
use super::attr::{Kind, member_name};

/// Checks every rule, recording each violation in `cx`. (A `#[layout]` on a field is reported
/// where fields are parsed, `attr::Field::from_ast`.)
pub fn check(cx: &Ctxt, input: &Input<'_>) {
    check_is_struct_or_enum(cx, input);
    check_keys_fit_the_kind(cx, input);
    check_assertions_need_concrete_type(cx, input);
    check_line_fields(cx, input);
}

/// Every field a cache-line check names is a field of the struct.
fn check_line_fields(cx: &Ctxt, input: &Input<'_>) {
    let InputData::Struct(_, fields) = &input.data else {
        return;
    };
    let names: Vec<String> = fields.iter().map(|f| f.name()).collect();
    for a in &input.attrs.assertions {
        let Some(lines) = &a.lines else { continue };
        for m in &lines.fields {
            let name = member_name(m);
            if names.contains(&name) {
                continue;
            }
            let hint = match closest(&name, &names) {
                Some(near) => format!("; did you mean `{near}`?"),
                None if names.is_empty() => String::new(),
                None => format!("; its fields are {}", names.join(", ")),
            };
            cx.error_spanned_by(
                m,
                format!("`{}` has no field `{name}`{hint}", input.ident.unraw()),
            );
        }
    }
}

/// The name in `names` nearest to `name`, if it is close enough to be a typo (edit distance at
/// most a third of the length).
fn closest<'n>(name: &str, names: &'n [String]) -> Option<&'n str> {
    names
        .iter()
        .map(|n| (edit_distance(name, n), n))
        .filter(|(d, n)| *d <= n.chars().count().max(3) / 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.as_str())
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A union has no field order: its fields all start at 0.
fn check_is_struct_or_enum(cx: &Ctxt, input: &Input<'_>) {
    if let InputData::Union(span) = input.data {
        cx.error_at(
            span,
            "#[derive(Layout)] works on structs and enums only: a union's fields all start at \
             offset 0, so it has no field order or padding to report",
        );
    }
}

/// `max_variant_size` means nothing on a struct; the cache-line checks name struct fields;
/// `optimal` (no field order is smaller) is not checked on an enum: a `repr(Rust)` enum's variant fields are ordered by the compiler, and the
/// size of a specified one is decided by its largest variant, which `max_variant_size` bounds.
fn check_keys_fit_the_kind(cx: &Ctxt, input: &Input<'_>) {
    for a in &input.attrs.assertions {
        match (&input.data, a.kind) {
            (InputData::Struct(..), Kind::MaxVariantSize) => cx.error_spanned_by(
                &a.key,
                "`max_variant_size` is for enums: a struct has no variants; use `max_size`",
            ),
            (InputData::Enum(_), kind) if kind.is_line_check() => cx.error_spanned_by(
                &a.key,
                format!(
                    "`{}` names struct fields and is not checked on an enum: a variant's \
                     fields have no cache lines of their own; bound the enum with `max_size = N`",
                    kind.key()
                ),
            ),
            (InputData::Enum(_), Kind::Optimal) => cx.error_spanned_by(
                &a.key,
                "`optimal` checks a struct's field order and is not checked on an enum; bound \
                 the largest variant with `max_variant_size = N` or the waste with \
                 `max_padding = N`",
            ),
            _ => {}
        }
    }
}

/// An assertion is a free `const _` item, which cannot name the struct's type parameters:
/// a generic struct is checked per instantiation with `assert_layout!`.
fn check_assertions_need_concrete_type(cx: &Ctxt, input: &Input<'_>) {
    let attrs = &input.attrs;
    if !input.has_type_params() {
        return;
    }
    let name = input.ident;
    let tr = if matches!(input.data, InputData::Enum(_)) {
        "HasEnumLayout"
    } else {
        "HasLayout"
    };
    if let Some(span) = attrs.report {
        cx.error_at(
            span,
            format!(
                "`report` needs a concrete type and `{name}` is generic: print \
                 `<{name}<..> as {tr}>::LAYOUT` for an instantiation instead"
            ),
        );
    }
    for a in &attrs.assertions {
        let key = &a.key;
        let check = a.text();
        if a.kind.is_line_check() {
            cx.error_spanned_by(
                key,
                format!(
                    "`{check}` needs a concrete type and `{name}` is generic: check the cache \
                     lines of a non-generic struct"
                ),
            );
            continue;
        }
        let mac = if matches!(input.data, InputData::Enum(_)) {
            "assert_enum_layout"
        } else {
            "assert_layout"
        };
        cx.error_spanned_by(
            key,
            format!(
                "`{check}` needs a concrete type and `{name}` is generic: check an \
                 instantiation with `{mac}!({name}<..>, {check})`"
            ),
        );
    }
}
