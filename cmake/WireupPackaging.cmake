# A Debian package of everything `cmake --install` puts in place, so a cluster
# builds wireup once and every HyperPod node installs the same files with
# lifecycle/install_wireup.sh (--deb, or a wireup_*.deb beside on_create.sh):
#
#   cmake --build build && (cd build && cpack -G DEB)   # build/wireup_<version>_<arch>.deb
#
# The package only carries files. It has no maintainer scripts: registering the
# plugin in plugstack.conf, reloading daemons, verifying and rolling back are
# the lifecycle scripts' job (docs/lifecycle.md), where they can be tested and
# dry-run. spank_wireup.so only loads into the Slurm whose headers it was built
# against, so that Slurm's major.minor is part of the package version.
include(WireupSlurm)

set(CPACK_PACKAGE_NAME wireup)
set(CPACK_PACKAGE_VENDOR wireup)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Slurm SPANK plugin, launcher and trainer for distributed LLM training on HyperPod")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
if(WIREUP_SLURM_FOUND)
  # Slurm spells its releases 22.05, 23.11: two-digit minor.
  string(REPLACE "." ";" _wireup_slurm_v "${WIREUP_SLURM_VERSION}")
  list(GET _wireup_slurm_v 0 _wireup_slurm_major)
  list(GET _wireup_slurm_v 1 _wireup_slurm_minor)
  if(_wireup_slurm_minor LESS 10)
    set(_wireup_slurm_minor "0${_wireup_slurm_minor}")
  endif()
  string(APPEND CPACK_PACKAGE_VERSION "+slurm${_wireup_slurm_major}.${_wireup_slurm_minor}")
endif()
set(CPACK_PACKAGE_CONTACT "wireup maintainers <wireup@localhost>")
set(CPACK_GENERATOR DEB)
# The lifecycle scripts expect the plugin at <prefix>/lib/slurm and install
# under /usr/local (WIREUP_PREFIX) by default; the package uses the same prefix.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr/local)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
include(CPack)
