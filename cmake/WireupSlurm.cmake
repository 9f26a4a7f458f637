# Locates spank.h. HyperPod keeps Slurm under /opt/slurm; Debian under /usr/include/slurm.
set(WIREUP_SLURM_INCLUDE_DIR "" CACHE PATH
    "Directory that contains slurm/spank.h (default: /opt/slurm/include, then system)")
if(WIREUP_SLURM_INCLUDE_DIR)
  set(_wireup_slurm_hints ${WIREUP_SLURM_INCLUDE_DIR})
else()
  set(_wireup_slurm_hints /opt/slurm/include /usr/local/include /usr/include)
endif()
find_path(WIREUP_SLURM_SPANK_DIR slurm/spank.h HINTS ${_wireup_slurm_hints} NO_DEFAULT_PATH)
if(WIREUP_SLURM_SPANK_DIR)
  file(STRINGS "${WIREUP_SLURM_SPANK_DIR}/slurm/slurm_version.h" _v
       REGEX "^#define SLURM_VERSION_NUMBER")
  string(REGEX REPLACE ".*0x([0-9a-fA-F]+).*" "\\1" _hex "${_v}")
  math(EXPR _maj "0x${_hex} >> 16 & 255")
  math(EXPR _min "0x${_hex} >> 8 & 255")
  math(EXPR _mic "0x${_hex} & 255")
  set(WIREUP_SLURM_VERSION "${_maj}.${_min}.${_mic}")
  set(WIREUP_SLURM_FOUND TRUE)
else()
  set(WIREUP_SLURM_FOUND FALSE)
endif()
if("slurm" IN_LIST WIREUP_HIDE_DEPS)  # cmake/WireupDeps.cmake
  set(WIREUP_SLURM_FOUND FALSE)
endif()
