/// The page's stylesheet and the Content-Security-Policy that allows exactly it.
public enum SignInPageStyle {
    /// The header the server must send with every sign-in page (and should send with anything
    /// else it serves): nothing loads but this stylesheet (by its hash) and `data:` images (the
    /// QR code); forms post only to the server itself; no other site may frame the page; no
    /// `<base>` can move the forms. Under `form-action 'self'` Chromium and Safari also stop a
    /// form's answer that redirects to another origin (w3c/webappsec-csp#8), so the server answers
    /// an OAuth provider's or SSO's form with the `.leaving` page, which moves on by a
    /// `<meta http-equiv="refresh">` (not a form submission) and a link.
    ///
    /// `SignInPageStyleTests` checks that the hash is the SHA-256 of `stylesheet`.
    public static let contentSecurityPolicy = "default-src 'none'; style-src '" + stylesheetHash + "'; img-src data:; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The CSP source of `stylesheet`: `sha256-` and its SHA-256 in base64. Kept here as text
    /// because this module has no hash function; the test computes it and says the new value
    /// when the stylesheet changes.
    public static let stylesheetHash = "sha256-eTcf1QWow6OL5EPY0fY8QQpcTnXwD0tYcVGz8tkcwF8="

    /// Other headers the page wants: no caching of a page with a CSRF token, no sniffing, and no
    /// referrer to any other origin. `same-origin`, not `no-referrer`: under `no-referrer` the
    /// Fetch standard has browsers send the page's own form posts with `Origin: null`, and the
    /// server's check that a post comes from the page (`SignInPageGate`) would refuse them all.
    public static let otherHeaders: [(name: String, value: String)] = [
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "same-origin"),
    ]

    /// The CSS inside the page's `<style>`: rem units, one fluid column at most 26rem wide, light
    /// and dark colours by `prefers-color-scheme`, a focus ring that shows on every control.
    public static let stylesheet = """

:root{color-scheme:light dark;--bg:#f5f6f8;--card:#fff;--text:#1c2127;--muted:#5b6570;--line:#d5dbe1;\
--field:#fff;--accent:#1f5fd6;--accent-hover:#194fb3;--on-accent:#fff;--error:#b3261e;--error-bg:#fdecea;\
--focus:#1f5fd6;--ok:#1a7f37}
@media (prefers-color-scheme:dark){:root{--bg:#0f1216;--card:#181c22;--text:#e7eaee;--muted:#9aa4ae;\
--line:#343b44;--field:#0f1216;--accent:#4c8df6;--accent-hover:#6aa0f8;--on-accent:#0b1220;--error:#ff8a80;\
--error-bg:#3a1714;--focus:#8ab4ff;--ok:#4ac26b}}
*,*::before,*::after{box-sizing:border-box}
[hidden]{display:none!important}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;background:var(--bg);color:var(--text);font:1rem/1.5 system-ui,-apple-system,\
"Segoe UI",Roboto,Cantarell,"Noto Sans",Ubuntu,sans-serif;display:flex;justify-content:center;padding:3rem 1rem}
main{width:100%;max-width:26rem}
header{text-align:center;margin-bottom:1.5rem}
.mark{width:3rem;height:3rem;margin:0 auto .75rem;border-radius:.75rem;background:var(--accent);\
color:var(--on-accent);font-size:1.5rem;font-weight:700;line-height:3rem}
.project{margin:0;font-size:1.25rem;font-weight:600;overflow-wrap:anywhere}
.host{margin:.125rem 0 0;color:var(--muted);font-size:.875rem;overflow-wrap:anywhere}
.card{background:var(--card);border:1px solid var(--line);border-radius:.75rem;padding:2rem 1.5rem;\
box-shadow:0 1px 3px rgb(0 0 0/.06)}
h1{margin:0 0 1.25rem;font-size:1.375rem;line-height:1.3;font-weight:600}
h1:has(+.lead){margin-bottom:.5rem}
.card>:last-child{margin-bottom:0}
.done~h1,.done~.lead{text-align:center}
.lead{margin:0 0 1.25rem;color:var(--muted);overflow-wrap:anywhere}
.lead strong{color:var(--text);font-weight:600}
form{margin:0}
.field{margin-bottom:1rem}
label{display:block;margin-bottom:.375rem;font-weight:600;font-size:.9375rem}
input{display:block;width:100%;min-height:2.75rem;padding:.5rem .75rem;font:inherit;color:inherit;\
background:var(--field);border:1px solid var(--line);border-radius:.5rem}
input[aria-invalid=true]{border-color:var(--error)}
input[autocomplete=one-time-code]{letter-spacing:.2em;font-variant-numeric:tabular-nums}
.hint{margin:.375rem 0 0;color:var(--muted);font-size:.875rem}
.error{margin:.5rem 0 1rem;padding:.5rem .75rem;border-radius:.5rem;background:var(--error-bg);\
color:var(--error);font-size:.9375rem}
.field .error{margin-bottom:0}
button,.button{display:block;width:100%;min-height:2.75rem;padding:.5rem 1rem;font:inherit;font-weight:600;\
text-align:center;text-decoration:none;border-radius:.5rem;border:1px solid transparent;cursor:pointer}
.primary{margin-top:1.5rem;background:var(--accent);color:var(--on-accent)}
.primary:hover{background:var(--accent-hover)}
.secondary{background:transparent;color:var(--text);border-color:var(--line)}
.secondary:hover{background:var(--bg)}
.alt+.alt{margin-top:.75rem}
.or{display:flex;align-items:center;gap:.75rem;margin:1.5rem 0;color:var(--muted);font-size:.875rem}
.or::before,.or::after{content:"";flex:1;border-top:1px solid var(--line)}
.more{margin-top:1.25rem;display:flex;flex-direction:column;align-items:center;gap:.5rem}
.link{display:inline;width:auto;min-height:0;padding:.25rem .5rem;background:none;border:0;\
color:var(--accent);font-weight:500;text-decoration:underline;text-underline-offset:.2em}
.link:hover{text-decoration-thickness:2px}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
input:focus-visible{outline-offset:0;border-color:var(--focus)}
.qr{margin:0 auto 1rem;width:12rem;max-width:100%;padding:.5rem;background:#fff;border-radius:.5rem}
.qr img{display:block;width:100%;height:auto}
.secret-label{margin:0;font-weight:600;font-size:.9375rem}
.secret{margin:.25rem 0 1.25rem;padding:.5rem .75rem;border:1px dashed var(--line);border-radius:.5rem;\
font-family:ui-monospace,"DejaVu Sans Mono",monospace;letter-spacing:.1em;overflow-wrap:anywhere;user-select:all}
.done{display:block;margin:0 auto 1rem;fill:none;stroke:var(--ok);stroke-width:3;stroke-linecap:round;\
stroke-linejoin:round}
footer{margin-top:1.5rem;text-align:center;color:var(--muted);font-size:.8125rem}
@media (max-width:24rem){body{padding:1.5rem .75rem}.card{padding:1.5rem 1rem}}
@media (forced-colors:active){.mark,.primary{border:1px solid CanvasText}}

"""
}
