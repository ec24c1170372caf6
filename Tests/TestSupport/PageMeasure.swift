public import Foundation

/// What a page looks like once a browser laid it out: measured by a script the test adds to a
/// copy of the page (the product's pages carry no script, and their policy forbids one).
public struct PageMeasure: Decodable, Sendable {
    public struct Sheet: Decodable, Sendable {
        public var lang: String
        public var direction: String
        public var width: Double
        public var text: String
        /// The frame's class (`frame w320 light before`), naming its width, theme and side.
        public var frame: String
        public var texts: [TextBox]
    }

    /// A header, body or bullet text as laid out: its real line count (line boxes of its text),
    /// and whether its mark of text past the lines the sheet shows is visible.
    public struct TextBox: Decodable, Sendable {
        /// `header`, `body` or `bullet`.
        public var role: String
        public var text: String
        public var lines: Int
        public var marked: Bool
    }

    public struct Image: Decodable, Sendable {
        public var alt: String
        public var naturalWidth: Int
    }

    /// What stands where a picture would be when the page has none (an external image, one not found):
    /// its alt text, its title, its text and its laid-out size.
    public struct StandIn: Decodable, Sendable {
        public var alt: String
        public var title: String
        public var text: String
        public var width: Double
        public var height: Double
    }

    public var sheets: [Sheet]
    public var images: [Image]
    public var stands: [StandIn]
    /// Elements that reach outside their sheet, or scroll within it, described.
    public var overflow: [String]
    /// Every resource the page fetched or tried to (data: URIs are not listed by browsers).
    public var resources: [String]
    /// Content-Security-Policy violations the page reported.
    public var violations: [String]
    /// How many script elements the page holds (the measuring one included).
    public var scripts: Int
    /// The layout viewport's width, and how wide the page's content is: wider scrolls sideways.
    public var viewportWidth: Double
    public var pageWidth: Double

    static let script = """
    <script>
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.blockedURI + ' ' + e.violatedDirective));
    window.addEventListener('load', () => {
      const out = {sheets: [], images: [], overflow: [], violations: window.__violations, scripts: document.scripts.length,
                   resources: performance.getEntriesByType('resource').map(e => e.name),
                   viewportWidth: document.documentElement.clientWidth, pageWidth: document.documentElement.scrollWidth};
      // Line boxes of an element's text: its text's fragments, one line per run of fragments that
      // overlap vertically (glyphs of another font on the same line sit a little higher or lower).
      const lines = element => {
        const range = document.createRange();
        range.selectNodeContents(element);
        const rects = [...range.getClientRects()].filter(r => r.width > 0 && r.height > 0).sort((a, b) => a.top - b.top);
        let count = 0, bottom = -Infinity;
        for (const r of rects) {
          if (r.top >= bottom - 0.5 * r.height) { count += 1; bottom = r.bottom; } else { bottom = Math.max(bottom, r.bottom); }
        }
        return count;
      };
      for (const sheet of document.querySelectorAll('.sheet')) {
        const box = sheet.getBoundingClientRect();
        const lang = sheet.getAttribute('lang');
        const texts = [];
        for (const mark of sheet.querySelectorAll('.beyond')) {
          const element = mark.parentElement, own = element.getBoundingClientRect(), m = mark.getBoundingClientRect();
          const role = element.tagName === 'H3' ? 'header' : element.classList.contains('body') ? 'body' : 'bullet';
          // What of the mark its text's box leaves visible (the box clips it).
          const visible = Math.min(m.bottom, own.bottom) - Math.max(m.top, own.top);
          texts.push({role, text: element.textContent, lines: lines(element), marked: visible > 0 && m.width > 0});
        }
        out.sheets.push({lang, direction: getComputedStyle(sheet).direction, width: box.width, text: sheet.innerText,
                         frame: sheet.parentElement.className, texts});
        if (sheet.scrollWidth > sheet.clientWidth + 1) out.overflow.push(lang + ' ' + box.width + ' px: the sheet scrolls sideways');
        for (const element of sheet.querySelectorAll('*')) {
          const r = element.getBoundingClientRect();
          if (r.width === 0 && r.height === 0) continue;
          const name = lang + ' ' + box.width + ' px: <' + element.tagName.toLowerCase() + '> "' + (element.textContent || element.alt || '').slice(0, 40) + '"';
          if (r.left < box.left - 0.5 || r.right > box.right + 0.5) out.overflow.push(name + ' reaches outside the sheet');
          if (element.scrollWidth > element.clientWidth + 1 && getComputedStyle(element).display !== 'inline') out.overflow.push(name + ' overflows itself');
        }
      }
      for (const image of document.images) out.images.push({alt: image.alt, naturalWidth: image.naturalWidth});
      out.stands = [...document.querySelectorAll('.sheet span[role=img]')].map(e => {
        const r = e.getBoundingClientRect();
        return {alt: e.getAttribute('aria-label') || '', title: e.title, text: e.textContent, width: r.width, height: r.height};
      });
      const pre = document.createElement('pre');
      pre.id = '__measure';
      pre.textContent = btoa(unescape(encodeURIComponent(JSON.stringify(out))));
      document.body.appendChild(pre);
      if (window.parent !== window) parent.postMessage(pre.textContent, '*');
    });
    </script>
    """

    /// Copies `page` beside itself with the measuring script added (and allowed by the policy),
    /// loads the copy in Chromium and reads the measurements back from the DOM it dumps.
    /// `width`: the window's width in CSS pixels, when the page is to be laid out at a phone's.
    public static func measure(_ page: URL, with chromium: Chromium, width: Int? = nil) async throws -> PageMeasure {
        var html = try String(contentsOf: page, encoding: .utf8)
        let policy = "img-src data:\">"
        guard html.contains(policy), let end = html.range(of: "</body>", options: .backwards) else {
            throw Chromium.Failure(description: "\(page.lastPathComponent) has no policy or no </body> to measure it by")
        }
        html.replaceSubrange(end, with: script + "\n</body>")
        html = html.replacingOccurrences(of: policy, with: "img-src data:; script-src 'unsafe-inline'\">")
        let copy = page.deletingLastPathComponent().appendingPathComponent(".measure-" + page.lastPathComponent)
        try Data(html.utf8).write(to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        let dom: String
        if let width, width < Chromium.minimumWindowWidth {
            let frame = page.deletingLastPathComponent().appendingPathComponent(".measure-frame-" + page.lastPathComponent)
            try Data(Chromium.frame(copy.lastPathComponent, width: width, height: 1000, listen: true).utf8).write(to: frame)
            defer { try? FileManager.default.removeItem(at: frame) }
            dom = try await chromium.dumpDOM(frame, width: Chromium.minimumWindowWidth)
        } else {
            dom = try await chromium.dumpDOM(copy, width: width)
        }
        guard let start = dom.range(of: "<pre id=\"__measure\">"),
              let stop = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex),
              let data = Data(base64Encoded: String(dom[start.upperBound..<stop.lowerBound])) else {
            throw Chromium.Failure(description: "the measuring script left no result in \(page.lastPathComponent)")
        }
        return try JSONDecoder().decode(PageMeasure.self, from: data)
    }
}
