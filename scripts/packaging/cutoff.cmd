@echo off
rem Cutoff launcher for Windows GUIs (Arena, Cute Chess, ...): point the GUI at this file.
rem It runs the engine unbuffered (python -u) from the repository this file lives in
rem (two levels up: scripts\packaging\cutoff.cmd), so the GUI's working directory does
rem not matter. It prefers the repository's .venv.
setlocal
set "CUTOFF_ROOT=%~dp0..\.."
set "PYTHONPATH=%CUTOFF_ROOT%;%PYTHONPATH%"
set "CUTOFF_PY=%CUTOFF_ROOT%\.venv\Scripts\python.exe"
if not exist "%CUTOFF_PY%" set "CUTOFF_PY=python"
"%CUTOFF_PY%" -u -m engine %*
