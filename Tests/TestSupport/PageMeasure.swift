public import Foundation

/// What a page looks like once a browser laid it out: measured by a script the test adds to a
/// copy of the page (the product's pages carry no script, and their policy forbids one).
public struct PageMeasure: Decodable, Sendable {
    public struct Sheet: Decodable, Sendable {
        public var lang: String
        public var direction: String
        public var width: Double
        public var text: String
    }

    public struct Image: Decodable, Sendable {
        public var alt: String
        public var naturalWidth: Int
    }

    public var sheets: [Sheet]
    public var images: [Image]
    /// Elements that reach outside their sheet, or scroll within it, described.
    public var overflow: [String]
    /// Every resource the page fetched or tried to (data: URIs are not listed by browsers).
    public var resources: [String]
    /// Content-Security-Policy violations the page reported.
    public var violations: [String]
    /// How many script elements the page holds (the measuring one included).
    public var scripts: Int

    static let script = """
    <script>
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', e => window.__violations.push(e.blockedURI + ' ' + e.violatedDirective));
    window.addEventListener('load', () => {
      const out = {sheets: [], images: [], overflow: [], violations: window.__violations, scripts: document.scripts.length,
                   resources: performance.getEntriesByType('resource').map(e => e.name)};
      for (const sheet of document.querySelectorAll('.sheet')) {
        const box = sheet.getBoundingClientRect();
        const lang = sheet.getAttribute('lang');
        out.sheets.push({lang, direction: getComputedStyle(sheet).direction, width: box.width, text: sheet.innerText});
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
      const pre = document.createElement('pre');
      pre.id = '__measure';
      pre.textContent = btoa(unescape(encodeURIComponent(JSON.stringify(out))));
      document.body.appendChild(pre);
    });
    </script>
    """

    /// Copies `page` beside itself with the measuring script added (and allowed by the policy),
    /// loads the copy in Chromium and reads the measurements back from the DOM it dumps.
    public static func measure(_ page: URL, with chromium: Chromium) async throws -> PageMeasure {
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
        let dom = try await chromium.dumpDOM(copy)
        guard let start = dom.range(of: "<pre id=\"__measure\">"),
              let stop = dom.range(of: "</pre>", range: start.upperBound..<dom.endIndex),
              let data = Data(base64Encoded: String(dom[start.upperBound..<stop.lowerBound])) else {
            throw Chromium.Failure(description: "the measuring script left no result in \(page.lastPathComponent)")
        }
        return try JSONDecoder().decode(PageMeasure.self, from: data)
    }
}
