package file

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// tmpDefaultDir is the last default directory (DefaultDir):
// $TMPDIR/airnode-<uid>/registry. Unlike the other two, which lie under
// directories the user owns, its parent is made in a directory every
// local user can write (/tmp), so another user may have made it first.
func tmpDefaultDir() string {
	return filepath.Join(os.TempDir(), "airnode-"+strconv.Itoa(os.Getuid()), "registry")
}

// errNotPrivate is wrapped by the error of a per-uid default directory
// that another user could write (checkPrivate).
var errNotPrivate = errors.New("not this user's alone")

// PrivateMode is the mode the per-uid default directory
// $TMPDIR/airnode-<uid>/registry and its parent are created with.
const PrivateMode = 0o700

// checkPrivate makes sure that dir, the per-uid default directory
// $TMPDIR/airnode-<uid>/registry (tmpDefaultDir, whether the URL named it
// or left it to the default), and its parent airnode-<uid> are the user's
// alone, as ssh checks ~/.ssh and the XDG spec $XDG_RUNTIME_DIR: each a
// real directory (not a symbolic link), owned by this process's uid (or
// root), writable by no group and no other user. Otherwise another local
// user could have made it first (/tmp is everyone's) and would receive
// this user's registrations, and so the calls and tokens of its
// consumers. With create, a missing one is made PrivateMode; without, a
// missing one is an error satisfying errors.Is(err, fs.ErrNotExist)
// (readers create nothing). A directory that fails is refused with an
// error naming its path, owner and mode and what to do (errNotPrivate).
// A directory the URL names elsewhere is not checked: a group may share
// it by design (umask 002, chmod 2775).
func checkPrivate(dir string, create bool) error {
	uid := os.Getuid()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if create {
			if err := os.Mkdir(d, PrivateMode); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("file registry: %w", err)
			}
		}
		if err := privateDir(dir, d, uid); err != nil {
			return err
		}
	}
	return nil
}

// privateDir reports, as an error, why d (dir or its parent) may not
// hold uid's private registry dir (checkPrivate); nil when it may.
func privateDir(dir, d string, uid int) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(d, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: d, Err: err}
	}
	owner := "uid " + strconv.Itoa(int(st.Uid))
	if u, err := user.LookupId(strconv.Itoa(int(st.Uid))); err == nil {
		owner += " (" + u.Username + ")"
	}
	perm := st.Mode & 0o7777
	var why string
	switch {
	case st.Mode&syscall.S_IFMT == syscall.S_IFLNK:
		why = "is a symbolic link"
	case st.Mode&syscall.S_IFMT != syscall.S_IFDIR:
		why = "is not a directory"
	case int(st.Uid) != uid && st.Uid != 0:
		why = fmt.Sprintf("is owned by another user, not by this process's uid %d", uid)
	case perm&0o022 != 0:
		why = "is writable by its group or by every user"
	default:
		return nil
	}
	return fmt.Errorf("file registry: refusing the default directory %s: %s %s (owner %s, mode %04o): %w; "+
		"another local user could put provider entries there and receive this user's calls and tokens. "+
		"Remove it as its owner or root (rm -rf %s) so that airnode makes it %04o, or name a directory of your own "+
		"(--registry file:///DIR, or set XDG_RUNTIME_DIR or HOME)",
		dir, d, why, owner, perm, errNotPrivate, filepath.Dir(dir), PrivateMode)
}

// guardDir checks, when r's directory is the per-uid default
// (tmpDefaultDir), that it is private (checkPrivate), making it with
// create; any other directory passes.
func (r *Registry) guardDir(create bool) error {
	if !r.p.private {
		return nil
	}
	return checkPrivate(r.p.dir, create)
}
