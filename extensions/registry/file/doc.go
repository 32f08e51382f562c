// Package file is the embedded default registry, extension name "file": a
// directory shared by the processes of one machine, with nothing to install.
//
// Layout: <dir>/<service key>/providers/<name>@<owner id> (and consumers/
// for side=consumer), <name> being the URL percent-encoded once with
// url.QueryEscape (a name over 200 bytes is replaced by "h-" and a
// SHA-256 prefix of the URL with its secrets written ***; the file always
// holds the URL). Each Registry that
// registers something creates <dir>/.owners/<owner id> ("<pid>-<12 hex>")
// and holds an exclusive flock on it for its life: its entries are live
// while that lock is held, so an entry whose owner's lock is free (or
// whose owner file is gone) belongs to a dead process, and readers
// ignore and remove it (a kill -9 is noticed at the next poll). A
// registry holds one descriptor whatever the number of its entries (one
// flocked descriptor per entry would have a provider of 200 services
// hold 200, which the accepts reserve does not
// count). A provider URL registered by another live registry is an
// error; a consumer URL is not: each registry has its own entry (two
// nodes of a process referring to one service in one millisecond).
//
// Entries of the older format (<name> without "@<owner id>", flocked
// themselves) are still read, and removed when their lock is free if
// they are named after the URL they hold, as a registry names them; an
// unlocked file of any other name was written by hand: it is skipped as
// invalid ("written by hand, unlocked") and never removed. The
// older versions read only that format: they take a new entry for a dead
// one and remove it, and its provider re-creates it within its poll, so
// it flaps in and out of every consumer's list. Rolling upgrade rule:
// upgrade every process of one registry directory (providers, consumers,
// airnode registry ls) together, or give the new version its own
// directory until the old processes are gone.
//
// Consumers are pushed changes through fsnotify (inotify), and poll every
// poll period, because a crashed process releases its lock without a
// file event. An idle poll reads nothing: it stats the directory and
// checks each owner's lock (each older-format entry's), and reads an
// entry only when the directory changed and the entry is new. The
// registries of one process share one inotify instance (one watch per
// providers directory), created by the first to subscribe and closed
// with the last (one per node, 500 nodes of one process took all 128
// instances a Debian user is allowed). When inotify is unavailable
// (fs.inotify.max_user_instances reached, or
// fs.inotify.max_user_watches), Subscribe still succeeds: one Warn per
// process names the limit, and the subscriptions see changes by
// polling, within poll (Registry.Polling reports it).
//
// A providers directory that cannot be read for another reason than
// being removed (out of descriptors, EACCES, EIO) is not the providers
// leaving: the last list is kept, a Warn names the error (EMFILE: "out
// of file descriptors: see ulimit -n") and is repeated every 30 s while
// it lasts, with how long the list has been stale (stale_for), every
// poll retries, and an Info line says when reading works again.
//
// A providers directory that is removed (rm -rf of the registry, a tmp
// cleaner, mv of the registry directory) is the registry being
// unavailable, as the zookeeper registry treats a lost session, not every
// provider leaving: subscribers are pushed nothing while it is missing
// and keep their last list (one Warn line), the providers' registries
// re-create their owner lock files and then their entries (and the
// directories) within their poll period (a registry checks each poll that
// its owner lock file's path still names the file it holds), and when the directory is back it
// is watched again and, for 3 poll periods (1 s to 10 s), the list pushed
// still holds the providers of the last list that have not re-created
// their entries yet. A list that lost providers is pushed after Settle
// (100 ms) if the directory is still there: an empty directory (every
// provider unregistered) is an empty list.
//
// Each poll a registry also puts back its entries that were removed,
// replaced or written in place (echo ... > entry, : > entry: their size
// or modification time changed and their content is not the URL
// registered), with a Warn naming the file and what it held: an entry is
// not a runtime override. What it cannot re-create (a directory made
// where an entry belongs, a file where the registry directory belongs)
// it logs at Warn the first time, then every 30 s with failed_polls and
// failing_for, and at Info when it works again.
//
// An entry readers cannot take as a URL of its directory (hand-written
// junk: text, binary, an empty file, a key given twice; a provider URL
// of another scheme than airnode (http://: no transport serves it) or
// with no port; the URL of another service key than the directory's; a
// directory or other non-regular file) is skipped, logged at Warn once
// per registry, entry and reason (naming the file and why; at most 256
// such lines, then one saying the rest are not logged), and returned by
// Registry.Invalid, which `airnode registry ls` shows (a service whose
// every entry is invalid too: Registry.ServicesWithInvalid names it,
// Services does not). A non-regular
// file is never removed: the registry removes only regular files, the
// entries and temporary files of dead owners. Services skips, with the
// same Warn, a service whose providers directory cannot be read (a file
// where the directory belongs, EACCES), and lists the others; running
// out of descriptors is still an error.
//
// Directories are created 0777 and entries 0666, less the process's umask
// (DirMode, EntryMode; they were 0755 and 0644 whatever the umask): users
// of one group share a registry with umask 002 in a setgid group
// directory (chmod 2775), whose new directories inherit the group. An
// entry whose URL has a token is 0640 less the umask (TokenEntryMode) and
// named by a hash of its URL with the token written *** (spi.URL.Redacted),
// so that the token is neither in a directory listing, nor to be tested
// offline against the name, nor readable outside the owner's group; a
// consumer that cannot read such an entry does not list that provider.
// Trust: whoever can write a registry directory (a group sharing one) can
// put an entry there, or remove or replace another's, and so receive the
// calls, and the tokens, of the consumers that read it: a shared
// directory trusts every user who can write it as much as every provider.
//
//	URL key   type      unit  default  bounds       meaning
//	(path)    path      -     see below             "file:///var/run/x" picks the directory
//	poll      duration  ms    500ms    10ms..1m     lock-state poll period per subscription
//
// The default directory (DefaultDir) is $XDG_RUNTIME_DIR/airnode/registry
// when XDG_RUNTIME_DIR is an existing directory, else
// os.UserCacheDir()/airnode/registry when it or its parent exists (not
// under a HOME that does not exist), else $TMPDIR/airnode-<uid>/registry:
// every process of one user that names no directory shares it, so a
// private registry names its own (file:///tmp/myapp-reg). The last lies
// in a directory every user can write, so its parent airnode-<uid> and it
// are made 0700 (PrivateMode), and when they exist, whether the URL names
// that directory or leaves it to the default, they are refused (an error
// naming the path, its owner and mode, and what to do; the keeper warns)
// unless each is a directory, not a symbolic link, owned by the uid (or
// root) and writable by no group or other user: another user could have
// made it first and would receive the calls. A directory named elsewhere
// is not checked (a group may share it by design). An unknown URL
// key is an error: a misspelling of poll gets the key meant, a key of the
// zookeeper registry (or a misspelling of one, file.cahce) what the file
// registry does instead, any other key how the directory is given.
// Safe for concurrent use; Close withdraws every entry and waits for its
// goroutines.
package file
