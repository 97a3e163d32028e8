import SearchlightCommandSupport

/// What a command prints for people: every line escaped for a terminal (a title, a path or a
/// query that holds `ESC [2K` or `\r` shows as text). JSON and CSV go through `Output.machine`.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Output.human(items.map { "\($0)" }.joined(separator: separator), terminator: terminator)
}
