// The baseline for `authctl token` as a whole process (benchmark P2): a Swift program built
// the same way as authctl that only prints a line, so the difference is authctl's own work.
print("hello")
