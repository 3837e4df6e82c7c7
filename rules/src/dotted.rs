//! The dot-separated text of this project's own tokens (refresh tokens, queue tickets):
//! `prefix.field.field…`, read field by field with nothing left over.

/// The `N` dot-separated fields of `text`, if it has exactly that many.
pub(crate) fn fields<const N: usize>(text: &str) -> Option<[&str; N]> {
    let mut parts = text.split('.');
    let mut fields = [""; N];
    for field in &mut fields {
        *field = parts.next()?;
    }
    parts.next().is_none().then_some(fields)
}

#[cfg(test)]
mod tests {
    use super::fields;

    #[test]
    fn exactly_n_fields_or_none() {
        assert_eq!(fields::<3>("a.b.c"), Some(["a", "b", "c"]));
        assert_eq!(fields::<3>("a.b"), None);
        assert_eq!(fields::<3>("a.b.c.d"), None);
        assert_eq!(fields::<2>("a."), Some(["a", ""]));
    }
}
