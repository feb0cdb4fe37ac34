"""The image the test cloud's libvirt host boots (``addons/guests.py``): Debian 12
(bookworm) made with mmdebstrap from Debian's archive, with what heat-tempest-plugin's
scenario tests and stoker's own guest tests ask a guest to run:

- cloud-init, reading only the config drive (Nova's ``force_config_drive``): no metadata
  service is asked, so a guest with no network still gets its user data;
- curl (``wc_notify``, a WaitConditionHandle's ``curl_cli``), heat-cfntools (``cfn-init``,
  ``cfn-signal``), os-collect-config with os-refresh-config and os-apply-config;
- an SSH server, and cloud-init's default user ``ec2-user`` (the name Heat's scenario
  tests log in as) with the server's key pair.

The kernel and initramfs are files of their own (Glance's ``kernel_id`` and ``ramdisk_id``
images, which Nova's libvirt driver boots directly), so the root file system is a bare
ext4 image (no partition table, no boot loader): made with ``mkfs.ext4 -d`` from the
tree, with no loop device and no mount.

Built once per recipe (a hash of everything below names its cache directory), under a
lock every test run shares: about 5 minutes, most of it mmdebstrap. ``manifest.txt``
lists the packages and versions it got: the archive moves with Debian's point releases,
so two builds of one recipe may differ there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.cloud.installation import BUILD_STEP_TIMEOUT_S, LOCK_WAIT_S
from tests.support import venv_cache

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
PACKAGES = (
    "systemd-sysv",
    "udev",
    "linux-image-cloud-amd64",
    "initramfs-tools",
    "cloud-init",
    "curl",
    "openssh-server",
    "sudo",
    "iproute2",
    "ifupdown",
    "isc-dhcp-client",
    "netbase",
    "iputils-ping",
    "heat-cfntools",
    "python3-os-collect-config",
    "python3-os-refresh-config",
    "python3-os-apply-config",
)
# What the guest never needs, left out of the image (smaller, quicker to copy and boot).
LEFT_OUT_PATHS = (
    "/usr/share/doc/*",
    "/usr/share/man/*",
    "/usr/share/info/*",
    "/usr/share/locale/*",
)
CLOUD_INIT_CONFIG = """\
datasource_list: [ConfigDrive, None]
system_info:
  default_user:
    name: ec2-user
    lock_passwd: true
    gecos: Heat's scenario tests log in as ec2-user
    groups: [adm, sudo]
    sudo: ["ALL=(ALL) NOPASSWD:ALL"]
    shell: /bin/bash
"""
# Timers and jobs a short-lived guest under emulation has no use for.
MASKED_UNITS = (
    "apt-daily.timer",
    "apt-daily-upgrade.timer",
    "man-db.timer",
    "e2scrub_all.timer",
    "e2scrub_reap.service",
    "fstrim.timer",
)
# The kernel's command line (Glance's ``os_command_line``): the root file system is the
# first virtio disk, the console the serial port Nova logs (``console log show``).
KERNEL_COMMAND_LINE = "root=/dev/vda rw console=ttyS0"
# Free space in the root file system beyond what the tree takes (MiB).
ROOT_SPARE_MIB = 512
# Changed when the steps below change in a way the constants above do not show.
RECIPE_VERSION = "1"


class GuestImageError(Exception):
    """The guest image could not be built; the message names the step and its log."""


@dataclass(frozen=True)
class GuestImage:
    """A built image: its three files and what it holds."""

    directory: Path

    @property
    def kernel(self) -> Path:
        return self.directory / "vmlinuz"

    @property
    def ramdisk(self) -> Path:
        return self.directory / "initrd.img"

    @property
    def root(self) -> Path:
        return self.directory / "root.qcow2"

    @property
    def manifest(self) -> Path:
        return self.directory / "manifest.txt"


def recipe_key() -> str:
    recipe = json.dumps(
        [
            SUITE,
            MIRROR,
            PACKAGES,
            LEFT_OUT_PATHS,
            CLOUD_INIT_CONFIG,
            MASKED_UNITS,
            KERNEL_COMMAND_LINE,
            ROOT_SPARE_MIB,
            RECIPE_VERSION,
        ]
    )
    return venv_cache.environment_key([recipe.encode()])


def ensure(cache: Path) -> tuple[GuestImage, float]:
    """The image for today's recipe, built unless a complete one is in ``cache``; and
    the seconds spent building (0 when cached)."""
    image = GuestImage(cache / f"guest-image-{recipe_key()}")
    lock = venv_cache.cache_lock(cache, "guest-image", LOCK_WAIT_S, GuestImageError)
    seconds = venv_cache.build_once(
        image.directory / ".stoker-complete", lock, lambda: _build(image, cache / "guest-image.log")
    )
    return image, seconds


def _build(image: GuestImage, log_path: Path) -> None:
    shutil.rmtree(image.directory, ignore_errors=True)
    tree = image.directory / "tree"
    image.directory.mkdir(parents=True)
    environment = venv_cache.outside_environment()
    with open(log_path, "a") as log:
        venv_cache.run_steps(
            [
                (
                    "mmdebstrap",
                    None,
                    [
                        "mmdebstrap",
                        "--mode=root",
                        "--variant=minbase",
                        "--include=" + ",".join(PACKAGES),
                        *(f"--dpkgopt=path-exclude={path}" for path in LEFT_OUT_PATHS),
                        '--aptopt=Acquire::Retries "3"',
                        SUITE,
                        str(tree),
                        MIRROR,
                    ],
                )
            ],
            log,
            log_path,
            environment,
            BUILD_STEP_TIMEOUT_S,
            "the guest image",
            GuestImageError,
        )
        _customize(tree)
        kernels = sorted((tree / "boot").glob("vmlinuz-*"))
        ramdisks = sorted((tree / "boot").glob("initrd.img-*"))
        if len(kernels) != 1 or len(ramdisks) != 1:
            raise GuestImageError(
                f"building the guest image: expected one kernel and one initramfs in {tree / 'boot'}, found {kernels + ramdisks}"
            )
        shutil.copyfile(kernels[0], image.kernel)
        shutil.copyfile(ramdisks[0], image.ramdisk)
        packages = subprocess.run(
            [
                "dpkg-query",
                f"--admindir={tree / 'var/lib/dpkg'}",
                "-W",
                "-f",
                "${Package} ${Version}\n",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        image.manifest.write_text(packages)
        raw = image.directory / "root.raw"
        size_mib = _tree_mib(tree) + ROOT_SPARE_MIB
        venv_cache.run_steps(
            [
                (
                    "mkfs.ext4",
                    None,
                    [
                        "mkfs.ext4",
                        "-q",
                        "-F",
                        "-L",
                        "guestroot",
                        "-d",
                        str(tree),
                        str(raw),
                        f"{size_mib}M",
                    ],
                ),
                (
                    "qemu-img convert",
                    None,
                    ["qemu-img", "convert", "-O", "qcow2", str(raw), str(image.root)],
                ),
            ],
            log,
            log_path,
            environment,
            BUILD_STEP_TIMEOUT_S,
            "the guest image",
            GuestImageError,
        )
    raw.unlink()
    shutil.rmtree(tree)


def _customize(tree: Path) -> None:
    (tree / "etc/cloud/cloud.cfg.d/90-stoker.cfg").write_text(CLOUD_INIT_CONFIG)
    (tree / "etc/fstab").write_text("/dev/vda / ext4 defaults 0 1\n")
    (tree / "etc/hostname").write_text("guest\n")
    # Empty: systemd makes one per boot, so each guest is a machine of its own.
    (tree / "etc/machine-id").write_text("")
    for unit in MASKED_UNITS:
        masked = tree / "etc/systemd/system" / unit
        masked.unlink(missing_ok=True)
        masked.symlink_to("/dev/null")
    for leftover in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for path in (tree / leftover).glob("*"):
            if path.is_file():
                path.unlink()


def _tree_mib(tree: Path) -> int:
    used = subprocess.run(
        ["du", "-sm", "--exclude=./proc", "."], cwd=tree, capture_output=True, text=True, check=True
    )
    return int(used.stdout.split()[0])
