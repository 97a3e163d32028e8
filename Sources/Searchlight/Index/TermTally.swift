import Foundation

/// The vocabulary changes of one batch (``IndexVocabulary``): for each word, by its UTF-8 bytes,
/// how many documents it gained or lost, each document counted once.
///
/// The tokenizer hands over each token as bytes, and most are counted with no allocation: a
/// word's bytes are hashed (FNV-1a) and looked up in an open-addressing table whose keys live in
/// one byte arena. With a `[String: Int]`, the tokenizer's callback spent about 1,200
/// instructions a token making the string, hashing it with SipHash and checking exclusive access;
/// with this table about 210 (callgrind, 2,000 WordNet entries). Its storage is allocated by hand
/// so that the callback reaches it through a pointer, with no class property access to check.
package struct TermTally: ~Copyable {
    /// One distinct word: its bytes in the arena, its hash, its delta, and the last document
    /// that counted it.
    private struct Entry {
        /// The first 8 bytes, big-endian (zeros after a shorter word): most comparisons of
        /// the flush's sort end there.
        var prefix: UInt64
        var start: Int32
        var length: Int32
        var hash: UInt32
        var delta: Int32
        var document: Int32
    }

    private var arena: UnsafeMutablePointer<UInt8>
    private var arenaCount = 0
    private var arenaCapacity: Int
    private var entries: UnsafeMutablePointer<Entry>
    private var entryCount = 0
    private var entryCapacity: Int
    /// Entry index + 1 for each slot (0: empty); a power of two, at most half full.
    private var slots: UnsafeMutablePointer<Int32>
    private var slotMask: Int

    /// The document being counted: a word counts once per document.
    package private(set) var document: Int32 = 0
    /// 1 while counting a document that enters the index, -1 for one that leaves it.
    package private(set) var sign: Int32 = 1

    package init() {
        arenaCapacity = 1 << 14
        arena = .allocate(capacity: arenaCapacity)
        entryCapacity = 1 << 10
        entries = .allocate(capacity: entryCapacity)
        slotMask = (1 << 11) - 1
        slots = .allocate(capacity: slotMask + 1)
        slots.initialize(repeating: 0, count: slotMask + 1)
    }

    deinit {
        arena.deallocate()
        entries.deallocate()
        slots.deallocate()
    }

    /// Starts counting the next document, which enters (`sign` 1) or leaves (-1) the index.
    package mutating func startDocument(sign: Int) {
        document &+= 1
        self.sign = sign < 0 ? -1 : 1
    }

    /// The number of distinct words counted since the last ``removeAll()``.
    package var count: Int { entryCount }

    /// Counts the word `bytes` for the current document, unless it already did.
    package mutating func add(_ bytes: UnsafeRawBufferPointer) {
        let length = bytes.count
        guard length > 0, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var hash: UInt32 = 2_166_136_261
        for index in 0..<length { hash = (hash ^ UInt32(base[index])) &* 16_777_619 }
        var slot = Int(hash) & slotMask
        while true {
            let found = Int(slots[slot])
            if found == 0 { break }
            let entry = entries + (found - 1)
            if entry.pointee.hash == hash, Int(entry.pointee.length) == length,
               memcmp(arena + Int(entry.pointee.start), base, length) == 0 {
                if entry.pointee.document != document {
                    entry.pointee.document = document
                    entry.pointee.delta &+= sign
                }
                return
            }
            slot = (slot + 1) & slotMask
        }
        // A new word.
        if arenaCount + length > arenaCapacity { growArena(toFit: arenaCount + length) }
        (arena + arenaCount).update(from: base, count: length)
        if entryCount == entryCapacity { growEntries() }
        var prefix: UInt64 = 0
        for index in 0..<8 { prefix = prefix << 8 | UInt64(index < length ? base[index] : 0) }
        entries[entryCount] = Entry(prefix: prefix, start: Int32(arenaCount), length: Int32(length), hash: hash, delta: sign, document: document)
        arenaCount += length
        entryCount += 1
        slots[slot] = Int32(entryCount)
        if entryCount * 2 > slotMask { growSlots() }
    }

    /// Calls `body` with each word whose count changed, in byte order (neighbouring words land
    /// on the same b-tree pages), and its delta.
    package func forEachChange(_ body: (UnsafeBufferPointer<UInt8>, Int) throws -> Void) rethrows {
        var order = [Int32]()
        order.reserveCapacity(entryCount)
        for index in 0..<entryCount where entries[index].delta != 0 { order.append(Int32(index)) }
        let entries = self.entries, arena = self.arena
        order.sort { a, b in
            let x = entries[Int(a)], y = entries[Int(b)]
            if x.prefix != y.prefix { return x.prefix < y.prefix }
            let common = Int(min(x.length, y.length))
            let order = memcmp(arena + Int(x.start), arena + Int(y.start), common)
            return order != 0 ? order < 0 : x.length < y.length
        }
        for index in order {
            let entry = entries[Int(index)]
            try body(UnsafeBufferPointer(start: arena + Int(entry.start), count: Int(entry.length)), Int(entry.delta))
        }
    }

    /// Forgets every count, keeping the storage.
    package mutating func removeAll() {
        arenaCount = 0
        entryCount = 0
        slots.update(repeating: 0, count: slotMask + 1)
    }

    private mutating func growArena(toFit needed: Int) {
        var capacity = arenaCapacity * 2
        while capacity < needed { capacity *= 2 }
        arena = Self.reallocate(arena, count: arenaCount, capacity: capacity)
        arenaCapacity = capacity
    }

    private mutating func growEntries() {
        entries = Self.reallocate(entries, count: entryCount, capacity: entryCapacity * 2)
        entryCapacity *= 2
    }

    /// `pointer`'s first `count` elements (of a trivial type) moved into `capacity` new ones.
    private static func reallocate<T>(_ pointer: UnsafeMutablePointer<T>, count: Int, capacity: Int) -> UnsafeMutablePointer<T> {
        let grown = UnsafeMutablePointer<T>.allocate(capacity: capacity)
        grown.moveInitialize(from: pointer, count: count)
        pointer.deallocate()
        return grown
    }

    private mutating func growSlots() {
        let count = (slotMask + 1) * 2
        slots.deallocate()
        slots = .allocate(capacity: count)
        slots.initialize(repeating: 0, count: count)
        slotMask = count - 1
        for index in 0..<entryCount {
            var slot = Int(entries[index].hash) & slotMask
            while slots[slot] != 0 { slot = (slot + 1) & slotMask }
            slots[slot] = Int32(index + 1)
        }
    }
}
