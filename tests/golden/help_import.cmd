help import
