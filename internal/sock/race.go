//go:build race

package sock

import "syscall"

// The race detector learns of the order that I/O gives from the syscall
// package: every syscall.Write is a release, and every successful
// syscall.Read an acquire, of one object shared by all descriptors. A raw
// system call tells it nothing, so under the detector a goroutine that
// reads what another wrote with a raw write (or the other way round)
// would seem unordered with it, and ordinary code (a variable set before a
// request is sent, read by the server that got it) would be reported as a
// race. So in race builds each raw write is preceded by an empty
// syscall.Write, and each raw read that got bytes is followed by an empty
// syscall.Read, of the same descriptor: neither moves a byte or waits (the
// descriptor is non-blocking), and the detector sees the order it would
// see without raw calls. Builds without the detector do nothing here.

func raceReleaseIO(fd uintptr) { _, _ = syscall.Write(int(fd), nil) }

func raceAcquireIO(fd uintptr) { _, _ = syscall.Read(int(fd), nil) }
