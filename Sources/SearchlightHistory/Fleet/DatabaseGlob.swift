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
/// folders, FIFOs, sockets, names that start with a dot unless the pattern does, or a second
/// name of a member (a link to it: the file is followed once, by its own name).
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
        var isDirectory: ObjCBool = false
        if !name.contains(where: { "*?[".contains($0) }), FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
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
        // Regular files only (a FIFO would block the open for good; a folder or a socket is no
        // database), and each file once: a link to a member of the folder is not a second member.
        var files: [FileKey: (path: String, isLink: Bool)] = [:]
        for name in names where matches(fileName: name) {
            let path = (directory as NSString).appendingPathComponent(name)
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            var link = stat()
            let isLink = lstat(path, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK
            let key = FileKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            if let kept = files[key] {
                // The file itself rather than a link to it; otherwise the first name.
                let better = (kept.isLink && !isLink) || (kept.isLink == isLink && path < kept.path)
                if !better { continue }
            }
            files[key] = (path, isLink)
        }
        return files.values.map(\.path).sorted()
    }

    private struct FileKey: Hashable {
        var device: UInt64
        var inode: UInt64
    }
}
