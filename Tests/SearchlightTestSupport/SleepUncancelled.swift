/// Waits `duration` even when the calling task is cancelled. A polling loop that sleeps with
/// `try? await Task.sleep` spins once its task is cancelled (each sleep throws at once, and
/// Swift Testing captures a backtrace for every throw): on a 2-core machine two such loops hold
/// the whole cooperative pool until their deadlines, and every other test stalls. The sleep
/// runs in a task of its own, which nothing cancels.
package func sleepUncancelled(for duration: Duration) async {
    await Task.detached { try? await Task.sleep(for: duration) }.value
}
