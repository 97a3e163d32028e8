import SearchlightHistory

extension SearchlightError {
    /// Runs `body`, converting what it throws into a `SearchlightError` that says what was
    /// being done.
    static func catching<T>(_ doing: @autoclosure () -> String, _ body: () throws -> T) throws(SearchlightError) -> T {
        do { return try body() } catch { throw SearchlightError(wrapping: error, doing: doing()) }
    }
}
