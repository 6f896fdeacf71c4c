package hoststream

// The handoff table: the memory that serve and the daemon share while the
// daemon has the host's stdio.
//
// Once handed off, the daemon reads the host's requests and writes its
// answers itself, and serve sees none of them. If the daemon dies, serve
// must answer every request the daemon read and had not answered, or the
// host would wait for them forever; a daemon that died cannot say which
// they are. So the daemon keeps them in an [idTable], a small file that
// both processes map: it adds an id when it reads a request and removes it
// when the answer's last byte is written, and serve reads what is left
// once the daemon is gone. Stores to the table are plain memory writes, no
// system call and no wake-up of serve.
//
// The table also says whether the daemon stopped in the middle of writing
// a line to the host, so that serve ends that line before it writes its
// own.
//
// An idTable's Add, Remove and SetPartial are safe for concurrent use by
// the goroutines of one process; Pending and Partial are for the other
// process, once the writer is gone. Whoever maps a table unmaps it with
// Close. Linux and other unix systems only.

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The layout of the file. A slot holds one id: a state word (used or
// free) and the id's JSON text, up to maxID bytes.
const (
	slotSize   = 64
	headerSize = slotSize
	maxID      = slotSize - 5 // state word and length byte
	// tableSize is the file's size: a header and 255 slots. Slots are taken
	// lowest first, so a host with few calls in flight touches one page.
	tableSize = 16 << 10
	slots     = (tableSize - headerSize) / slotSize

	magic      = "mcpxho1\x00"
	offPartial = 8 // uint32: 1 while a line to the host is partly written
)

// errNoRoom is returned by Add for an id the table cannot hold: it is too
// long or every slot is taken. The caller tells serve of it another way.
var errNoRoom = errors.New("no room in the handoff table")

// createTable makes the file of a table, zeroed to [tableSize]: a memory file, or
// where the system has none a file in the temporary directory, unlinked
// at once. Either way it lives only while a process holds it. The caller
// closes it once it is mapped and handed on.
func createTable() (*os.File, error) {
	var f *os.File
	if fd, err := unix.MemfdCreate("mcpx-handoff", unix.MFD_CLOEXEC); err == nil {
		f = os.NewFile(uintptr(fd), "mcpx-handoff")
	} else {
		if f, err = os.CreateTemp("", "mcpx-handoff-*"); err != nil {
			return nil, fmt.Errorf("creating a handoff table: %w", err)
		}
		os.Remove(f.Name())
	}
	if err := f.Truncate(tableSize); err != nil {
		f.Close()
		return nil, fmt.Errorf("creating a handoff table: %w", err)
	}
	if _, err := f.WriteAt([]byte(magic), 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("creating a handoff table: %w", err)
	}
	return f, nil
}

// idTable is a mapped table file.
type idTable struct {
	mem []byte

	mu   sync.Mutex
	used map[string]int // id -> slot
	free []int          // free slots, the lowest last
	next int            // slots from next on were never used
}

// mapTable maps the table file fd (shared, read and write). The caller may
// close fd afterwards.
func mapTable(fd int) (*idTable, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("mapping a handoff table: %w", err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size != tableSize {
		return nil, fmt.Errorf("mapping a handoff table: not a table file (mode %o, %d bytes)", st.Mode, st.Size)
	}
	mem, err := syscall.Mmap(fd, 0, tableSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mapping a handoff table: %w", err)
	}
	if string(mem[:len(magic)]) != magic {
		syscall.Munmap(mem)
		return nil, errors.New("mapping a handoff table: bad magic")
	}
	return &idTable{mem: mem, used: map[string]int{}}, nil
}

// Close unmaps the table. The table must not be used after.
func (t *idTable) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mem == nil {
		return nil
	}
	err := syscall.Munmap(t.mem)
	t.mem = nil
	return err
}

func (t *idTable) word(off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&t.mem[off]))
}

// Add records id (a JSON-RPC id's JSON text) as read and not answered.
// Adding an id already there is a no-op.
func (t *idTable) Add(id string) error {
	if len(id) == 0 || len(id) > maxID {
		return errNoRoom
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.used[id]; ok {
		return nil
	}
	var s int
	switch {
	case len(t.free) > 0:
		s = t.free[len(t.free)-1]
		t.free = t.free[:len(t.free)-1]
	case t.next < slots:
		s = t.next
		t.next++
	default:
		return errNoRoom
	}
	off := headerSize + s*slotSize
	t.mem[off+4] = byte(len(id))
	copy(t.mem[off+5:], id)
	// The state word last, atomically: a process killed in between
	// leaves a free slot, never a used one with a torn id.
	atomic.StoreUint32(t.word(off), 1)
	t.used[id] = s
	return nil
}

// Remove forgets id; it reports whether id was there.
func (t *idTable) Remove(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.used[id]
	if !ok {
		return false
	}
	delete(t.used, id)
	atomic.StoreUint32(t.word(headerSize+s*slotSize), 0)
	// Keep the free list sorted high to low so the lowest is reused
	// first: a short list, so insertion is cheap.
	i := len(t.free)
	t.free = append(t.free, s)
	for i > 0 && t.free[i-1] < s {
		t.free[i] = t.free[i-1]
		i--
	}
	t.free[i] = s
	return true
}

// SetPartial records whether a line to the host is partly written.
func (t *idTable) SetPartial(partial bool) {
	var v uint32
	if partial {
		v = 1
	}
	atomic.StoreUint32(t.word(offPartial), v)
}

// Partial reports what SetPartial last recorded.
func (t *idTable) Partial() bool {
	return atomic.LoadUint32(t.word(offPartial)) == 1
}

// Pending returns the ids in the table, in slot order.
func (t *idTable) Pending() []string {
	var ids []string
	for s := range slots {
		off := headerSize + s*slotSize
		if atomic.LoadUint32(t.word(off)) != 1 {
			continue
		}
		n := int(t.mem[off+4])
		if n == 0 || n > maxID {
			continue
		}
		ids = append(ids, string(t.mem[off+5:off+5+n]))
	}
	return ids
}
