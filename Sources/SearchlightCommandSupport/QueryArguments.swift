/// The words of a search command's query as the shell gave them. A `--` among them is the end
/// of options, as a shell user types it before a query that starts with `-`
/// (`search --db app.sqlite -- -draft notes`), not a word of the query: the first one is dropped.
public enum QueryArguments {
    public static func words(_ arguments: [String]) -> [String] {
        guard let end = arguments.firstIndex(of: "--") else { return arguments }
        var words = arguments
        words.remove(at: end)
        return words
    }

    /// The first word before a `--` that looks like an option (`--facets`: two dashes and a
    /// letter): a mistyped option, which would otherwise be searched for as a word. After `--`,
    /// it is a word of the query.
    public static func unknownOption(_ arguments: [String]) -> String? {
        let options = arguments.firstIndex(of: "--").map { arguments[..<$0] } ?? arguments[...]
        return options.first { $0.hasPrefix("--") && $0.dropFirst(2).first?.isLetter == true }
    }
}
