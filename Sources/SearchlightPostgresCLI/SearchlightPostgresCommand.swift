import ArgumentParser
@main struct Placeholder: ParsableCommand { }
