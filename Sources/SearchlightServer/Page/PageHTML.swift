import Foundation
import Searchlight

/// The search page's HTML: the same page with and without JavaScript. Without it, the form
/// submits to `/?q=…` and the server renders the results here (facets and the next page are
/// links); with it, `page.js` searches as you type and redraws the same elements. Every piece
/// of document or user text is escaped; matched words become `<mark>` from the private-use
/// markers the page asks for (``SearchRequest/Highlight/privateUse``).
struct PageHTML {
    /// A line above the results: an error, or a server that needs a key.
    struct Notice {
        var message: String
    }

    var title: String
    var facets: [String]
    var keyed: Bool

    func render(_ state: PageState, view: PageView? = nil, cursor: String? = nil, tookMs: Double? = nil, notice: Notice? = nil) -> String {
        let config = #"{"facets":["# + facets.map(Self.jsonString).joined(separator: ",") + #"],"keyed":\#(keyed),"title":\#(Self.jsonString(title))}"#
        var html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(Self.escape(state.text.isEmpty ? title : "\(state.text) – \(title)"))</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/assets/page.css">
        <script src="/assets/page.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#results">Skip to results</a>
        <div id="searchlight" data-config="\(Self.escape(config))">
        <header>
        <h1>\(Self.escape(title))</h1>
        <form id="search-form" role="search" action="/" method="get">
        <label for="q">Search the index</label>
        <div class="combo">
        <input id="q" name="q" type="search" value="\(Self.escape(state.text))" autocomplete="off" autocapitalize="off" spellcheck="false" role="combobox" aria-autocomplete="list" aria-expanded="false" aria-controls="suggestions" aria-describedby="keys-help"\(state.text.isEmpty ? " autofocus" : "")>
        <ul id="suggestions" role="listbox" aria-label="Suggestions" hidden></ul>
        </div>

        """
        for filter in state.filters { html += "<input type=\"hidden\" name=\"filter\" value=\"\(Self.escape(filter))\">\n" }
        for entity in state.entities { html += "<input type=\"hidden\" name=\"entity\" value=\"\(Self.escape(entity))\">\n" }
        for source in state.sources { html += "<input type=\"hidden\" name=\"source\" value=\"\(Self.escape(source))\">\n" }
        html += """
        <button type="submit">Search</button>
        </form>
        <p id="keys-help" class="help">Results appear as you type. Arrow keys move through suggestions and results; Escape returns here; / searches from anywhere.</p>
        <form id="key-form" class="key-form" hidden>
        <label for="key">API key or tenant token</label>
        <input id="key" type="password" autocomplete="off">
        <button type="submit">Use</button>
        </form>
        </header>
        <main>

        """
        html += "<p id=\"notice\" class=\"notice\"\(notice == nil ? " hidden" : "") role=\"alert\">\(notice.map { Self.escape($0.message) } ?? "")</p>\n"
        html += "<p id=\"status\" class=\"status\" role=\"status\" aria-live=\"polite\">\(view.map { statusLine($0, text: state.text, tookMs: tookMs) } ?? "")</p>\n"
        html += "<ul id=\"chips\" class=\"chips\" aria-label=\"Active filters\">\(chips(state))</ul>\n"
        html += "<div class=\"layout\">\n<nav id=\"facets\" class=\"facets\" aria-label=\"Filters\">\(view.map { facetsHTML($0, state: state) } ?? "")</nav>\n"
        html += "<section id=\"results\" aria-label=\"Results\" tabindex=\"-1\">\n"
        html += "<div id=\"explanation\" class=\"explanation\">\(view.map { explanationHTML($0, state: state) } ?? "")</div>\n"
        html += "<ol id=\"hits\" class=\"hits\">"
        for (position, hit) in (view?.hits ?? []).enumerated() { html += hitHTML(hit, first: position == 0) }
        html += "</ol>\n"
        if let cursor {
            var next = state
            next.cursor = nil
            html += "<a id=\"more\" class=\"more\" href=\"\(Self.escape(next.url(cursor: cursor)))\">More results</a>\n"
        } else {
            html += "<a id=\"more\" class=\"more\" hidden>More results</a>\n"
        }
        html += "</section>\n</div>\n</main>\n</div>\n</body>\n</html>\n"
        return html
    }

    /// "12 results for “text” (3 ms)" as HTML, the text isolated (`<bdi>`: a right-to-left
    /// override in it turns nothing around it).
    func statusLine(_ view: PageView, text: String, tookMs: Double?) -> String {
        let took = tookMs.map { " (\(Int($0.rounded())) ms)" } ?? ""
        let quoted = "“<bdi>\(Self.escape(text))</bdi>”"
        if view.total == 0 { return "No results for \(quoted)\(took)" }
        let count = PageView.count(view.total, atLeast: view.totalRelation == "gte")
        return "\(count) \(view.total == 1 && view.totalRelation != "gte" ? "result" : "results") for \(quoted)\(took)"
    }

    func chips(_ state: PageState) -> String {
        var html = ""
        func chip(_ label: String, _ next: PageState) {
            html += "<li><bdi>\(Self.escape(label))</bdi> <a href=\"\(Self.escape(next.url()))\" aria-label=\"Remove \(Self.escape(label))\">×</a></li>"
        }
        for filter in state.filters { chip(filter, state.toggling(filter: filter)) }
        for entity in state.entities { chip("entity: \(entity)", state.toggling(entity: entity)) }
        for source in state.sources { chip("source: \(source)", state.toggling(source: source)) }
        return html
    }

    func facetsHTML(_ view: PageView, state: PageState) -> String {
        var html = ""
        func group(_ name: String, _ items: [(label: String, count: Int?, selected: Bool, next: PageState?)]) {
            guard !items.isEmpty else { return }
            html += "<section class=\"facet\"><h2>\(Self.escape(name))</h2><ul>"
            for item in items {
                let count = item.count.map { " <span class=\"count\">\(PageView.count($0, atLeast: false))</span>" } ?? ""
                if let next = item.next {
                    html += "<li><a href=\"\(Self.escape(next.url()))\"\(item.selected ? " aria-current=\"true\" class=\"selected\"" : "")><bdi>\(Self.escape(item.label))</bdi>\(count)</a></li>"
                } else {
                    html += "<li><span><bdi>\(Self.escape(item.label))</bdi>\(count)</span></li>"
                }
            }
            html += "</ul></section>"
        }
        if view.countsByEntity.count > 1 || !state.entities.isEmpty {
            group("entity", view.countsByEntity.filter { $0.value > 0 || state.entities == [$0.key] }.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
                ($0.key, $0.value, state.entities == [$0.key], state.toggling(entity: $0.key))
            })
        }
        if let sources = view.countsBySource, sources.count > 1 || !state.sources.isEmpty {
            group("source", sources.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map {
                ($0.key, $0.value, state.sources == [$0.key], state.toggling(source: $0.key))
            })
        }
        for facet in view.facets ?? [] {
            group(facet.attribute, facet.buckets.map { bucket in
                let clause = PageState.clause(facet.attribute, bucket.value)
                return (PageView.shown(bucket.value), bucket.count, clause.map(state.filters.contains) ?? false, clause.map(state.toggling(filter:)))
            })
        }
        return html
    }

    func explanationHTML(_ view: PageView, state: PageState) -> String {
        var html = ""
        if let explanation = view.explanation {
            html += "<p>\(Self.escape(explanation.message))</p>"
            if !explanation.suggestions.isEmpty {
                html += "<p>Did you mean " + explanation.suggestions.map { suggestion in
                    var next = state
                    (next.text, next.cursor) = (suggestion, nil)
                    return "<a href=\"\(Self.escape(next.url()))\">\(Self.escape(suggestion))</a>"
                }.joined(separator: ", ") + "?</p>"
            }
        }
        let corrected = view.corrections.filter { !$0.replacements.isEmpty }
        if !corrected.isEmpty {
            html += "<p class=\"corrections\">Also matching: " + corrected.map { correction in
                Self.escape(correction.word) + " → " + correction.replacements.prefix(3).map { Self.escape($0.text) }.joined(separator: ", ")
            }.joined(separator: "; ") + "</p>"
        }
        return html
    }

    func hitHTML(_ hit: PageView.Hit, first: Bool) -> String {
        let heading = hit.titleHighlight.map(Self.marked) ?? hit.title.map(Self.escape) ?? Self.escape(PageView.shown(hit.id))
        var meta = Self.escape(hit.entity) + " · " + Self.escape(PageView.shown(hit.id))
        if let source = hit.source { meta = Self.escape(source) + " · " + meta }
        // A snippet of the title alone says nothing more.
        let snippet = hit.snippet.isEmpty || hit.snippet == hit.titleHighlight ? "" : "<p class=\"snippet\"><bdi>\(Self.marked(hit.snippet))</bdi></p>"
        return "<li class=\"hit\" tabindex=\"\(first ? 0 : -1)\"><h3><bdi>\(heading)</bdi></h3>\(snippet)<p class=\"meta\"><bdi>\(meta)</bdi></p></li>"
    }

    /// HTML-escaped text (also for attribute values in double or single quotes).
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\u{E000}", "\u{E001}": break
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Escaped text with the private-use markers as `<mark>` (an unbalanced marker is dropped).
    static func marked(_ text: String) -> String {
        var out = "", open = false
        var current = ""
        for scalar in text.unicodeScalars {
            if scalar == "\u{E000}", !open {
                out += escape(current) + "<mark>"
                (current, open) = ("", true)
            } else if scalar == "\u{E001}", open {
                out += escape(current) + "</mark>"
                (current, open) = ("", false)
            } else if scalar != "\u{E000}", scalar != "\u{E001}" {
                current.unicodeScalars.append(scalar)
            }
        }
        return out + escape(current) + (open ? "</mark>" : "")
    }

    static func jsonString(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
