# Optional dependencies and the configure summary.
#
# WIREUP_HIDE_DEPS: a ;-list of optional dependencies to treat as not found,
# whatever is installed: sentencepiece pcre2 icu torch pmix slurm onednn catch2
# nccl. Each detection site asks wireup_dep_hidden() after its find_package,
# pkg_check_modules or find_path, so a configure with one hidden behaves as
# a machine without it (tests/build/optional_deps.sh builds each such tree).
set(WIREUP_HIDE_DEPS "" CACHE STRING
    "optional dependencies treated as missing (sentencepiece;pcre2;icu;torch;pmix;slurm;onednn;catch2;nccl)")
set(WIREUP_KNOWN_DEPS sentencepiece pcre2 icu torch pmix slurm onednn catch2 nccl)
foreach(_dep IN LISTS WIREUP_HIDE_DEPS)
  if(NOT _dep IN_LIST WIREUP_KNOWN_DEPS)
    message(FATAL_ERROR "WIREUP_HIDE_DEPS: unknown dependency '${_dep}' "
                        "(known: ${WIREUP_KNOWN_DEPS})")
  endif()
endforeach()
if(WIREUP_HIDE_DEPS)
  message(STATUS "wireup: hidden on purpose (WIREUP_HIDE_DEPS): ${WIREUP_HIDE_DEPS}")
endif()

# wireup_dep_hidden(NAME OUT): OUT is TRUE when NAME is in WIREUP_HIDE_DEPS.
function(wireup_dep_hidden name out)
  if(name IN_LIST WIREUP_HIDE_DEPS)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# wireup_hide_dep(NAME VAR...): where NAME is hidden, each VAR is set to
# VAR-NOTFOUND in the caller's scope (a normal variable, which hides a cached
# find_path/find_library result without changing the cache).
macro(wireup_hide_dep name)
  if("${name}" IN_LIST WIREUP_HIDE_DEPS)
    foreach(_wireup_var ${ARGN})
      set(${_wireup_var} "${_wireup_var}-NOTFOUND")
    endforeach()
  endif()
endmacro()

# wireup_part(NAME BUILT|SKIPPED REASON): one line of the configure summary.
function(wireup_part name state reason)
  if(NOT state STREQUAL "BUILT" AND NOT state STREQUAL "SKIPPED")
    message(FATAL_ERROR "wireup_part(${name}): BUILT or SKIPPED, not ${state}")
  endif()
  set_property(GLOBAL APPEND PROPERTY WIREUP_PARTS_${state} "${name} (${reason})")
endfunction()

# wireup_parts_summary(): the summary, printed once at the end of the
# top-level CMakeLists.txt.
function(wireup_parts_summary)
  get_property(built GLOBAL PROPERTY WIREUP_PARTS_BUILT)
  get_property(skipped GLOBAL PROPERTY WIREUP_PARTS_SKIPPED)
  message(STATUS "wireup: ---- configure summary ----")
  foreach(part IN LISTS built)
    message(STATUS "wireup: built: ${part}")
  endforeach()
  foreach(part IN LISTS skipped)
    message(STATUS "wireup: skipped: ${part}")
  endforeach()
endfunction()
