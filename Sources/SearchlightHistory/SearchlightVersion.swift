/// The release of the Searchlight libraries, as `searchlight --version` prints it.
///
/// It names the code, not the on-disk formats: those carry versions of their own (the history
/// schema's, the capture triggers', the index layout's), which the libraries read and upgrade.
public enum SearchlightVersion {
    /// The release, as semantic versioning spells it.
    public static let current = "0.2.0"
}
