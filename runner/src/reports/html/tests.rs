//! The page's tests.

use super::*;

#[test]
fn esc_and_anchor_leave_no_markup() {
    assert_eq!(
        esc("<script>\"'&\u{0}</textarea>"),
        "&lt;script&gt;&quot;&#39;&amp;\\u{0}&lt;/textarea&gt;"
    );
    assert_eq!(anchor("read.path-x"), "read.path-x");
    assert_eq!(anchor("a b\"<_"), "a_20_b_22__3c__5f_");
    assert_ne!(anchor("a_20_"), anchor("a "));
}

#[test]
fn the_csp_hashes_the_inline_code() {
    let page = render(&[], Err("none"));
    assert!(page.contains(&csp_hash(JS)) && page.contains(&csp_hash(CSS)));
    assert_eq!(page.matches("<script").count(), 1);
}
