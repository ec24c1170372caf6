/// The one style sheet every page carries inline (the Content-Security-Policy allows inline styles,
/// nothing fetched). The sheet's sizes and colours are guesses at iOS's, said so on every page.
enum PreviewStyle {
    static let contentSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

    /// Line heights of the sheet's texts, in ems.
    static let headerLineHeight = 1.2, bodyLineHeight = 1.35, bulletLineHeight = 1.3

    /// Each mark of text past the lines the sheet shows sits half a line below the last line shown:
    /// a line box that a fallback font makes a little taller never sets it off, a further line always does.
    static let beyondMarks = [("h3", Sheet.headerLines, headerLineHeight), (".body", Sheet.bodyLines, bodyLineHeight),
                              (".text", Sheet.bulletLines, bulletLineHeight)]
        .map { selector, lines, lineHeight in ".sheet \(selector) .beyond{top:calc(\(Double(lines) + 0.5) * \(lineHeight)em)}" }
        .joined(separator: "\n")

    static let css = """
    :root{font-family:-apple-system,BlinkMacSystemFont,"SF Pro Text","Helvetica Neue",Arial,sans-serif}
    body{margin:0;padding:16px 24px 48px;background:#f2f2f7;color:#1c1c1e}
    h1{font-size:24px;margin:8px 0 12px;overflow-wrap:anywhere}
    h2{font-size:19px;margin:32px 0 8px;overflow-wrap:anywhere}
    a{color:#0a58ca}
    .approximation{background:#fff8e1;border:1px solid #e0c068;border-radius:8px;padding:8px 12px;max-width:980px;font-size:13px;line-height:1.45}
    .facts{font-size:14px;line-height:1.5;max-width:980px}
    .facts li{margin:2px 0}
    table{border-collapse:collapse;font-size:13px;background:#fff}
    th,td{border-bottom:1px solid #d1d1d6;padding:5px 8px;text-align:start;vertical-align:top}
    th{background:#e5e5ea}
    .state-APPROVED{color:#1b7f3b;font-weight:600}
    .state-REJECTED{color:#b3261e;font-weight:600}
    .state-PENDING{color:#8a5a00;font-weight:600}
    .muted{color:#6e6e73}
    .frames{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
    .frame{margin:0}
    .frame figcaption{font-size:12px;color:#6e6e73;margin:0 0 6px}
    .sheet{box-sizing:border-box;border-radius:14px;overflow:hidden;padding:20px 16px 14px;box-shadow:0 1px 4px rgba(0,0,0,.25)}
    .w320 .sheet{width:320px}
    .w430 .sheet{width:430px}
    .light .sheet{background:#fff;color:#000}
    .dark .sheet{background:#1c1c1e;color:#fff}
    .sheet h3{font-size:22px;line-height:\(headerLineHeight);font-weight:700;margin:0 0 10px;overflow-wrap:anywhere}
    .sheet .hero{display:block;width:100%;height:auto;border-radius:10px;margin:0 0 12px}
    .sheet .body{font-size:15px;line-height:\(bodyLineHeight);margin:0 0 12px;overflow-wrap:anywhere}
    .light .body{color:#3c3c43}
    .dark .body{color:#ebebf5}
    .bullets{list-style:none;margin:0 0 12px;padding:0}
    .bullets li{display:flex;align-items:center;gap:12px;margin:0 0 10px;font-size:15px;line-height:\(bulletLineHeight)}
    .bullets img{width:32px;height:32px;flex:none;border-radius:7px}
    .bullets .missing{box-sizing:border-box;width:32px;height:32px;flex:none;border-radius:7px;border:1.5px dashed currentColor;display:flex;align-items:center;justify-content:center;font-size:14px;opacity:.6}
    .bullets span{min-width:0;overflow-wrap:anywhere}
    .answer{border-radius:10px;padding:10px 12px;margin:0 0 12px;font-size:13px;line-height:1.35;overflow-wrap:anywhere}
    .light .answer{background:#f2f2f7}
    .dark .answer{background:#2c2c2e}
    .answer strong{display:block;font-size:15px;margin:0 0 2px}
    .controls{border-top:1px solid currentColor;padding-top:10px;font-size:12px;text-align:center;opacity:.55}
    .near{outline:2px dashed #d97706;outline-offset:2px}
    .sheet h3,.sheet .body,.bullets .text{position:relative;overflow:hidden}
    .sheet .beyond{position:absolute;left:0;right:0;bottom:0;pointer-events:none;background:repeating-linear-gradient(135deg,rgba(217,119,6,.6) 0 3px,transparent 3px 7px)}
    \(beyondMarks)
    .notes{font-size:13px;margin:8px 0 0;padding-inline-start:20px}
    .changes{font-size:14px;line-height:1.5;max-width:980px;padding-inline-start:20px}
    .changes li{margin:4px 0;overflow-wrap:anywhere}
    .placeholder{box-sizing:border-box;width:320px;border:2px dashed #aeaeb2;border-radius:14px;padding:28px 16px;font-size:15px;line-height:1.4;color:#6e6e73;text-align:center;overflow-wrap:anywhere}
    .dark .placeholder{background:#1c1c1e;color:#ebebf5}
    """
}
