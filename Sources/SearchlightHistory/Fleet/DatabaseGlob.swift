import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The databases of a fleet: a folder and a pattern of file names in it, such as
/// `tenants/*.sqlite` (quote it in a shell, so that the command sees the pattern).
///
/// Wildcards (`*`, `?`, `[…]`, as `fnmatch(3)` reads them) may appear in the file name only, not
/// in the folder: one folder is watched for files that appear and go. SQLite's own files beside a
/// database (`-wal`, `-shm`, `-journal`) are never members, whatever the pattern; nor are
/// folders, or names that start with a dot unless the pattern does.
///
/// ```swift
/// let glob = try DatabaseGlob("tenants/*.sqlite")
/// for path in try glob.matchingPaths() { … }
/// ```
public struct DatabaseGlob: Sendable, Hashable, CustomStringConvertible {
    /// The folder, as an absolute path.
    public let directory: String
    /// The pattern of file names.
    public let pattern: String

    /// Parses a glob pattern; relative folders are read from the current directory.
    ///
    /// - Throws: ``SearchlightError/Code-swift.struct/invalidArgument`` for an empty pattern, a
    ///   folder with wildcards, or a pattern that names a folder (`tenants/`).
    public init(_ text: String) throws(SearchlightError) {
        guard !text.isEmpty else { throw SearchlightError(.invalidArgument, "invalid --dbs pattern: it is empty") }
        if text.contains("\0") { throw SearchlightError(.invalidArgument, "invalid --dbs pattern: it contains a NUL character") }
        let url = URL(fileURLWithPath: text)
        let name = text.hasSuffix("/") ? "" : url.lastPathComponent
        guard !name.isEmpty, name != ".", name != ".." else {
            throw SearchlightError(.invalidArgument, "invalid --dbs pattern \"\(UserText.shown(text))\": it names a folder; add a file pattern such as '*.sqlite'")
        }
        let folder = url.deletingLastPathComponent().standardizedFileURL.path
        if folder.contains(where: { "*?[".contains($0) }) {
            throw SearchlightError(.invalidArgument, "invalid --dbs pattern \"\(UserText.shown(text))\": wildcards may appear in the file name only, not in the folder")
        }
        directory = folder
        pattern = name
    }

    /// The pattern as an absolute path.
    public var description: String { (directory as NSString).appendingPathComponent(pattern) }

    /// Whether a file of the folder with this name is a member (SQLite's side files never are).
    public func matches(fileName name: String) -> Bool {
        if name.hasSuffix("-wal") || name.hasSuffix("-shm") || name.hasSuffix("-journal") { return false }
        return fnmatch(pattern, name, FNM_PERIOD) == 0
    }

    /// The regular files of the folder that match, as absolute paths, sorted.
    ///
    /// - Throws: ``SearchlightError/Code-swift.struct/databaseNotFound`` when the folder cannot
    ///   be read.
    public func matchingPaths() throws(SearchlightError) -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw SearchlightError(.databaseNotFound, "cannot read the folder \(directory) of --dbs \"\(UserText.shown(description, limit: 200))\": \((error as NSError).localizedDescription)")
        }
        return names.filter(matches(fileName:)).map { (directory as NSString).appendingPathComponent($0) }.filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }.sorted()
    }
}
