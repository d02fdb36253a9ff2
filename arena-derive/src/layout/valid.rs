//! The rules a `#[derive(Layout)]` input must follow, one function per rule, each with a message
//! that says what to do instead.

use crate::ast::InputData;
use crate::ctxt::Ctxt;

use super::Input;

/// Checks every rule, recording each violation in `cx`. (A `#[layout]` on a field is reported
/// where fields are parsed, `attr::Field::from_ast`.)
pub fn check(cx: &Ctxt, input: &Input<'_>) {
    check_is_struct(cx, input);
    check_assertions_need_concrete_type(cx, input);
}

/// Enums and unions have no single field order: an enum's size depends on its variants, a
/// union's fields all start at 0.
fn check_is_struct(cx: &Ctxt, input: &Input<'_>) {
    match input.data {
        InputData::Struct(..) => {}
        InputData::Enum(span) => cx.error_at(
            span,
            "#[derive(Layout)] works on structs only: an enum's size depends on its variants' \
             payloads and tag; derive Layout on a struct for each variant's payload instead",
        ),
        InputData::Union(span) => cx.error_at(
            span,
            "#[derive(Layout)] works on structs only: a union's fields all start at offset 0, \
             so it has no field order or padding to report",
        ),
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
    if let Some(span) = attrs.report {
        cx.error_at(
            span,
            format!(
                "`report` needs a concrete type and `{name}` is generic: print \
                 `<{name}<..> as HasLayout>::LAYOUT` for an instantiation instead"
            ),
        );
    }
    for a in &attrs.assertions {
        let key = &a.key;
        let check = match &a.value {
            Some(v) => format!("{key} = {v}"),
            None => key.to_string(),
        };
        cx.error_spanned_by(
            key,
            format!(
                "`{check}` needs a concrete type and `{name}` is generic: check an \
                 instantiation with `assert_layout!({name}<..>, {check})`"
            ),
        );
    }
}
