/// A completion of the last word of what the user is typing (``SearchIndex/suggest(_:limit:typos:)``).
public struct SearchSuggestion: Hashable, Sendable, Codable {
    /// The completed word, as the index holds it (lower case, no diacritics).
    public var word: String
    /// The user's text with its last word completed.
    public var text: String
    /// How many documents hold the word (in all entities).
    public var documents: Int
    /// Edits between the typed prefix and the word's beginning (0: it starts with what was typed).
    public var typos: Int

    public init(word: String, text: String, documents: Int, typos: Int) {
        self.word = word
        self.text = text
        self.documents = documents
        self.typos = typos
    }
}
