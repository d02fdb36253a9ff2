//! The rules a `#[derive(Soa)]` input must follow, one function per rule, each with a message that
//! says what to do instead.

use crate::ast::{InputData, Style};
use crate::ctxt::Ctxt;

use super::Input;

/// Checks every rule, recording each violation in `cx`.
pub fn check(cx: &Ctxt, input: &Input<'_>) {
    check_is_struct_with_fields(cx, input);
    check_plain_without_checked_deserialize(cx, input);
}

/// `#[soa(plain)]` promises that any field values make a valid row, so the serde column formats
/// build rows from their columns without the row's `Deserialize`. A `#[serde(try_from = "..")]` or
/// `#[serde(from = "..")]` says the row's `Deserialize` goes through a conversion, which exists to
/// check or fix the fields: the two contradict each other.
fn check_plain_without_checked_deserialize(cx: &Ctxt, input: &Input<'_>) {
    let (Some(plain), Some(conversion)) = (&input.attrs.plain, &input.attrs.serde_conversion)
    else {
        return;
    };
    let key = crate::attr::key_name(conversion);
    cx.error_spanned_by(
        plain,
        format!(
            "#[soa(plain)] says any field values make a valid row, but #[serde({key} = ..)] \
             builds the row through a conversion that may check them (the column formats would \
             skip it): remove `plain` and read the rows with the row format (SoaVec's own \
             Deserialize), or remove the conversion"
        ),
    );
}

/// Columns are per field: an enum's variants have different fields, a union's fields overlap, and
/// a struct without fields has nothing to store.
fn check_is_struct_with_fields(cx: &Ctxt, input: &Input<'_>) {
    match &input.data {
        InputData::Struct(Style::Unit, _) => cx.error_spanned_by(
            input.ident,
            "#[derive(Soa)] needs a struct with fields: a unit struct has no columns to store; \
             count values with a `usize` instead",
        ),
        InputData::Struct(_, fields) if fields.is_empty() => cx.error_spanned_by(
            input.ident,
            "#[derive(Soa)] needs at least one field: this struct has no columns to store",
        ),
        InputData::Struct(..) => {}
        InputData::Enum(span) => cx.error_at(
            *span,
            "#[derive(Soa)] works on structs only: an enum's variants have different fields, so \
             there is no fixed set of columns; derive Soa on a struct per variant instead",
        ),
        InputData::Union(span) => cx.error_at(
            *span,
            "#[derive(Soa)] works on structs only: a union's fields share storage, so they cannot \
             be split into columns",
        ),
    }
}
