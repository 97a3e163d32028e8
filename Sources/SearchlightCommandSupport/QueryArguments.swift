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
}
