# Shared by every maintainer script: spliced into the deb scripts in place of their
# UNIT_HELPERS marker line by scripts/package.sh, and %include'd by the rpm spec. POSIX sh.

# systemctl only talks to a running systemd that manages this root: not in a chroot or
# image build (no /run/systemd/system), and not when dpkg installs into another root
# ($DPKG_ROOT set by dpkg --root).
systemd_live() {
  [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]
}

# What `systemctl enable` does for WantedBy=multi-user.target, done by hand so it also
# works where systemctl must not run. $1: the unit file's absolute path.
unit_enable() {
  mkdir -p "${DPKG_ROOT:-}/etc/systemd/system/multi-user.target.wants"
  ln -sf "$1" "${DPKG_ROOT:-}/etc/systemd/system/multi-user.target.wants/${1##*/}"
}

# What `systemctl disable` does for the link unit_enable made. $1: the unit's name.
unit_disable() {
  rm -f "${DPKG_ROOT:-}/etc/systemd/system/multi-user.target.wants/$1"
}
