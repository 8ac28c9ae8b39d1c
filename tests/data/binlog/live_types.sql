-- Live type coverage for the binlog decoder on MariaDB (src/mysql/live_types_test.cpp).
--
-- Run with the mariadb client (it needs DELIMITER) against a server with binlog_format=ROW,
-- binlog_row_image=FULL and binlog_row_metadata=FULL. Every table lives in database
-- live_types, has an integer primary key `id` as its first column, and ends in the state that
-- the test reads back with SELECT; the test replays the binlog written by this script and
-- checks that the decoded row events produce exactly that state, value for value.
--
-- Sections: integers, floating point, DECIMAL, temporal types with fsp 0-6 (negative and
-- fractional TIMEs, zero dates), BIT(1..64), ENUM/SET (every member; a 2-byte ENUM; a 64-member
-- SET), strings in several charsets (4-byte UTF-8, empty, 64 KiB), BLOB/TEXT sizes, MariaDB
-- compressed columns, JSON, GEOMETRY, UUID/INET4/INET6, every DML kind, a transaction of more
-- than 100k rows, and a compressed-events section (log_bin_compress=ON, reset to OFF at the end).

SET SESSION sql_mode = '';
SET SESSION time_zone = '+00:00';
SET NAMES utf8mb4;
DROP DATABASE IF EXISTS live_types;
CREATE DATABASE live_types CHARACTER SET utf8mb4;
USE live_types;

-- Integers ------------------------------------------------------------------------------------
CREATE TABLE ints (
  id INT PRIMARY KEY,
  ti TINYINT, tu TINYINT UNSIGNED,
  si SMALLINT, su SMALLINT UNSIGNED,
  mi MEDIUMINT, mu MEDIUMINT UNSIGNED,
  ii INT, iu INT UNSIGNED,
  bi BIGINT, bu BIGINT UNSIGNED
);
INSERT INTO ints VALUES
  (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0),
  (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615),
  (3, 0, 128, 0, 32768, 0, 8388608, 0, 2147483648, 0, 9223372036854775808),
  (4, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

-- Floating point: values whose decimal text round-trips exactly --------------------------------
CREATE TABLE floats (id INT PRIMARY KEY, f FLOAT, d DOUBLE);
INSERT INTO floats VALUES
  (1, 0, 0), (2, 1.5, -0.5), (3, -0.125, 0.1), (4, 1048576, 1.7976931348623157e308),
  (5, 65504, 2.2250738585072014e-308), (6, -3.25, -123456789.125), (7, NULL, NULL);

-- DECIMAL ---------------------------------------------------------------------------------------
CREATE TABLE decimals (
  id INT PRIMARY KEY,
  d65_30 DECIMAL(65,30), d65_0 DECIMAL(65,0), d30_30 DECIMAL(30,30), d10_0 DECIMAL(10,0),
  d5_2 DECIMAL(5,2), d18_9 DECIMAL(18,9), du DECIMAL(12,4) UNSIGNED
);
INSERT INTO decimals VALUES
  (1, 99999999999999999999999999999999999.999999999999999999999999999999,
      99999999999999999999999999999999999999999999999999999999999999999,
      0.999999999999999999999999999999, 9999999999, 999.99, 999999999.999999999, 99999999.9999),
  (2, -99999999999999999999999999999999999.999999999999999999999999999999,
      -99999999999999999999999999999999999999999999999999999999999999999,
      -0.999999999999999999999999999999, -9999999999, -999.99, -999999999.999999999, 0),
  (3, 0, 0, 0, 0, 0, 0, 0),
  (4, 0.000000000000000000000000000001, 1, 0.000000000000000000000000000001, 1, 0.01, 0.000000001, 0.0001),
  (5, -1.5, -1, -0.5, -100, -0.05, -12345.6789, 1234.5),
  (6, 12345678901234567890.123456789012345678901234567890, 100000000000000000000, 0.1, 1000000000, 10.1,
      123456789.123456789, 10),
  (7, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

-- Temporal types with every fsp, negative and fractional TIMEs, zero dates ---------------------
CREATE TABLE temporals (
  id INT PRIMARY KEY,
  y YEAR, dt DATE,
  t0 TIME(0), t1 TIME(1), t2 TIME(2), t3 TIME(3), t4 TIME(4), t5 TIME(5), t6 TIME(6),
  dt0 DATETIME(0), dt1 DATETIME(1), dt2 DATETIME(2), dt3 DATETIME(3), dt4 DATETIME(4), dt5 DATETIME(5),
  dt6 DATETIME(6),
  ts0 TIMESTAMP(0) NULL, ts1 TIMESTAMP(1) NULL, ts2 TIMESTAMP(2) NULL, ts3 TIMESTAMP(3) NULL,
  ts4 TIMESTAMP(4) NULL, ts5 TIMESTAMP(5) NULL, ts6 TIMESTAMP(6) NULL
);
INSERT INTO temporals VALUES
  (1, 1901, '1000-01-01',
   '-838:59:59', '-838:59:58.9', '-838:59:58.99', '-838:59:58.999', '-838:59:58.9999', '-838:59:58.99999',
   '-838:59:58.999999',
   '1000-01-01 00:00:00', '1000-01-01 00:00:00.0', '1000-01-01 00:00:00.00', '1000-01-01 00:00:00.000',
   '1000-01-01 00:00:00.0000', '1000-01-01 00:00:00.00000', '1000-01-01 00:00:00.000000',
   '1970-01-01 00:00:01', '1970-01-01 00:00:01.0', '1970-01-01 00:00:01.00', '1970-01-01 00:00:01.000',
   '1970-01-01 00:00:01.0000', '1970-01-01 00:00:01.00000', '1970-01-01 00:00:01.000000'),
  (2, 2155, '9999-12-31',
   '838:59:59', '838:59:58.9', '838:59:58.99', '838:59:58.999', '838:59:58.9999', '838:59:58.99999',
   '838:59:58.999999',
   '9999-12-31 23:59:59', '9999-12-31 23:59:59.9', '9999-12-31 23:59:59.99', '9999-12-31 23:59:59.999',
   '9999-12-31 23:59:59.9999', '9999-12-31 23:59:59.99999', '9999-12-31 23:59:59.999999',
   '2038-01-19 03:14:07', '2038-01-19 03:14:07.9', '2038-01-19 03:14:07.99', '2038-01-19 03:14:07.999',
   '2038-01-19 03:14:07.9999', '2038-01-19 03:14:07.99999', '2038-01-19 03:14:07.999999'),
  (3, 0, '0000-00-00',
   '00:00:00', '-00:00:00.5', '-00:00:00.01', '-00:00:00.001', '-00:00:00.0001', '-00:00:00.00001',
   '-00:00:00.000001',
   '0000-00-00 00:00:00', '0000-00-00 00:00:00.0', '0000-00-00 00:00:00.00', '0000-00-00 00:00:00.000',
   '0000-00-00 00:00:00.0000', '0000-00-00 00:00:00.00000', '0000-00-00 00:00:00.000000',
   '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',
   '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00'),
  (4, 2024, '2024-02-00',
   '-12:34:56', '-12:34:56.7', '-12:34:56.78', '-12:34:56.789', '-12:34:56.7890', '-12:34:56.78901',
   '-12:34:56.789012',
   '2024-02-29 12:34:56', '2024-02-29 12:34:56.7', '2024-02-29 12:34:56.78', '2024-02-29 12:34:56.789',
   '2024-02-29 12:34:56.7890', '2024-02-29 12:34:56.78901', '2024-02-29 12:34:56.789012',
   '2024-02-29 12:34:56', '2024-02-29 12:34:56.7', '2024-02-29 12:34:56.78', '2024-02-29 12:34:56.789',
   '2024-02-29 12:34:56.7890', '2024-02-29 12:34:56.78901', '2024-02-29 12:34:56.789012'),
  (5, 1999, '2000-00-00',
   '-01:00:00', '00:00:00.1', '00:00:00.01', '23:59:59.999', '100:00:00.0001', '-100:00:00.00001',
   '00:00:00.000001',
   '2000-00-00 00:00:00', '1999-12-31 23:59:59.5', '2000-01-01 00:00:00.01', '2000-01-01 00:00:00.001',
   '2000-01-01 00:00:00.0001', '2000-01-01 00:00:00.00001', '2000-01-01 00:00:00.000001',
   '1999-12-31 23:59:59', '1999-12-31 23:59:59.5', '2000-01-01 00:00:00.01', '2000-01-01 00:00:00.001',
   '2000-01-01 00:00:00.0001', '2000-01-01 00:00:00.00001', '2000-01-01 00:00:00.000001'),
  (6, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL);

-- BIT(1) .. BIT(64), and ENUM / SET with every member ---------------------------------------------
DELIMITER //
CREATE PROCEDURE make_types()
BEGIN
  DECLARE i INT DEFAULT 1;
  DECLARE cols TEXT DEFAULT 'id INT PRIMARY KEY';
  DECLARE ones TEXT DEFAULT '1';
  DECLARE zeros TEXT DEFAULT '2';
  DECLARE pattern TEXT DEFAULT '3';
  DECLARE members TEXT DEFAULT '';
  WHILE i <= 64 DO
    SET cols = CONCAT(cols, ', b', i, ' BIT(', i, ')');
    SET ones = CONCAT(ones, ', b''', REPEAT('1', i), '''');
    SET zeros = CONCAT(zeros, ', 0');
    SET pattern = CONCAT(pattern, ', b''', RIGHT(REPEAT('10', 32), i), '''');
    SET i = i + 1;
  END WHILE;
  SET @s = CONCAT('CREATE TABLE bits (', cols, ')');
  PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st;
  SET @s = CONCAT('INSERT INTO bits VALUES (', ones, '), (', zeros, '), (', pattern, ')');
  PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st;

  -- ENUM with 300 members (stored in 2 bytes).
  SET i = 1;
  WHILE i <= 300 DO
    SET members = CONCAT(members, IF(i = 1, '', ','), '''m', i, '''');
    SET i = i + 1;
  END WHILE;
  SET @s = CONCAT('CREATE TABLE big_enum (id INT PRIMARY KEY, e ENUM(', members, '))');
  PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st;
  INSERT INTO big_enum SELECT seq, CONCAT('m', seq) FROM seq_1_to_300;
  INSERT INTO big_enum VALUES (301, NULL), (302, '');

  -- SET with 64 members (stored in 8 bytes): each member alone, none, all.
  SET members = '';
  SET i = 1;
  WHILE i <= 64 DO
    SET members = CONCAT(members, IF(i = 1, '', ','), '''s', i, '''');
    SET i = i + 1;
  END WHILE;
  SET @s = CONCAT('CREATE TABLE big_set (id INT PRIMARY KEY, s SET(', members, '))');
  PREPARE st FROM @s; EXECUTE st; DEALLOCATE PREPARE st;
  INSERT INTO big_set SELECT seq, CONCAT('s', seq) FROM seq_1_to_64;
  INSERT INTO big_set VALUES (65, ''), (66, NULL);
  UPDATE big_set SET s = (SELECT GROUP_CONCAT(CONCAT('s', seq)) FROM seq_1_to_64) WHERE id = 65;
END//
DELIMITER ;
CALL make_types();
DROP PROCEDURE make_types;

CREATE TABLE enums (
  id INT PRIMARY KEY,
  e ENUM('a', 'b', 'c', 'ü', '😀', ''),
  s SET('x', 'y', 'z', 'ß')
);
INSERT INTO enums VALUES
  (1, 'a', ''), (2, 'b', 'x'), (3, 'c', 'y'), (4, 'ü', 'z'), (5, '😀', 'ß'), (6, '', 'x,y,z,ß'),
  (7, 'a', 'x,z'), (8, NULL, NULL);
-- An invalid ENUM value stores the error value 0 (sql_mode without STRICT).
INSERT INTO enums VALUES (9, 'not-a-member', 'x');

-- Strings ---------------------------------------------------------------------------------------
CREATE TABLE strings (
  id INT PRIMARY KEY,
  c10 CHAR(10), c255 CHAR(255), v60 VARCHAR(60), v300 VARCHAR(300),
  lat CHAR(20) CHARACTER SET latin1, latv VARCHAR(300) CHARACTER SET latin1,
  bin BINARY(16), vbin VARBINARY(300), asc_ VARCHAR(10) CHARACTER SET ascii,
  tb TINYBLOB, b BLOB, mb MEDIUMBLOB, lb LONGBLOB,
  tt TINYTEXT, t TEXT, mt MEDIUMTEXT, lt LONGTEXT
);
INSERT INTO strings VALUES
  (1, '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', ''),
  (2, 'abc', REPEAT('é', 255), REPEAT('x', 60), REPEAT('😀', 300), 'café', REPEAT('é', 300),
   UNHEX('000102030405060708090A0B0C0D0E0F'), UNHEX(REPEAT('FF00', 150)), 'plain',
   REPEAT('b', 255), REPEAT('B', 65535), REPEAT('m', 65536), REPEAT('L', 70000),
   REPEAT('t', 255), REPEAT('T', 65535), REPEAT('𝄞', 16384), REPEAT('l', 65536)),
  (3, '😀𝄞', 'trailing  ', 'tab\tnl\nquote''bs\\', 'null\0byte', 'ÿ', 'Ä', UNHEX('00'), UNHEX(''), 'a',
   UNHEX('00FF00'), UNHEX('DEADBEEF'), 'short', '', '日本語', '中文', 'ελληνικά', '🎉 emoji 🎉'),
  (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

-- MariaDB compressed columns: short values are stored raw behind a 0x00 header byte, long ones
-- deflated behind a header with the original length.
CREATE TABLE compressed_columns (id INT PRIMARY KEY, vc VARCHAR(1000) COMPRESSED, tc TEXT COMPRESSED,
                                 bc BLOB COMPRESSED);
INSERT INTO compressed_columns VALUES
  (1, '', '', ''), (2, 'tiny', 'x', UNHEX('00')),
  (3, REPEAT('compressible ', 70), REPEAT('compressible text ', 4000), REPEAT(UNHEX('00FF'), 3000)),
  (4, REPEAT('😀', 250), REPEAT('ü', 30000), NULL), (5, NULL, NULL, NULL);

-- JSON (MariaDB stores it as LONGTEXT) ------------------------------------------------------------
CREATE TABLE jsons (id INT PRIMARY KEY, j JSON);
INSERT INTO jsons VALUES
  (1, '{}'), (2, '[]'), (3, '{"a": 1, "b": [true, false, null], "c": {"d": "e"}}'),
  (4, '[1, -2, 3.5, 1e308, 12345678901234567890123456789, -0.0, "x"]'),
  (5, '{"deep": {"deeper": {"deepest": [[[[["end"]]]]]}}}'),
  (6, '"just a string with \\u00e9 and 😀"'), (7, '18446744073709551616'), (8, 'null'), (9, NULL),
  (10, CONCAT('[', REPEAT('{"k": "v"},', 5000), '{}]'));

-- GEOMETRY ----------------------------------------------------------------------------------------
CREATE TABLE geoms (id INT PRIMARY KEY, g GEOMETRY, p POINT, l LINESTRING, pg POLYGON);
INSERT INTO geoms VALUES
  (1, ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POINT(-1.5 2.25)'),
   ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)'), ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 4, 0 0))')),
  (2, ST_GeomFromText('MULTIPOINT(1 1, 2 2)', 4326), ST_GeomFromText('POINT(10 20)', 4326),
   ST_GeomFromText('LINESTRING(1 2, 3 4)', 4326),
   ST_GeomFromText('POLYGON((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 3 2, 3 3, 2 2))', 4326)),
  (3, ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(0 0, 1 1))'), NULL, NULL, NULL);

-- UUID, INET4, INET6 --------------------------------------------------------------------------------
CREATE TABLE nets (id INT PRIMARY KEY, u UUID, v4 INET4, v6 INET6);
INSERT INTO nets VALUES
  (1, '00000000-0000-0000-0000-000000000000', '0.0.0.0', '::'),
  (2, 'ffffffff-ffff-ffff-ffff-ffffffffffff', '255.255.255.255', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'),
  (3, '123e4567-e89b-12d3-a456-426614174000', '192.168.1.1', '2001:db8::1'),
  (4, '6ccd780c-baba-1026-9564-5b8c656024db', '10.0.0.255', '::ffff:192.0.2.128'),
  (5, NULL, NULL, NULL);

-- Every DML kind ------------------------------------------------------------------------------------
CREATE TABLE dml (id INT PRIMARY KEY, n INT, s VARCHAR(50));
INSERT INTO dml VALUES (1, 1, 'one');
INSERT INTO dml VALUES (2, 2, 'two'), (3, 3, 'three'), (4, 4, 'four'), (5, 5, 'five');
UPDATE dml SET s = 'TWO' WHERE id = 2;
UPDATE dml SET n = n * 10 WHERE id >= 3;
UPDATE dml SET id = 50 WHERE id = 5;
DELETE FROM dml WHERE id = 1;
DELETE FROM dml WHERE id IN (3, 4);
INSERT INTO dml VALUES (1, 100, 'again');
REPLACE INTO dml VALUES (2, 200, 'replaced');
INSERT INTO dml VALUES (6, 6, 'six') ON DUPLICATE KEY UPDATE n = 0;
INSERT INTO dml VALUES (6, 6, 'six') ON DUPLICATE KEY UPDATE n = 66;
START TRANSACTION;
INSERT INTO dml VALUES (7, 7, 'seven');
UPDATE dml SET s = 'in a transaction' WHERE id = 7;
DELETE FROM dml WHERE id = 50;
COMMIT;
START TRANSACTION;
INSERT INTO dml VALUES (8, 8, 'rolled back');
ROLLBACK;
-- Updates and deletes on typed rows, so before images of every type are decoded too.
UPDATE ints SET ti = ti + 1, bu = 42 WHERE id = 4;
UPDATE temporals SET t6 = '-00:00:00.000002', ts6 = '2001-02-03 04:05:06.654321' WHERE id = 4;
UPDATE strings SET mt = CONCAT(mt, '!'), v60 = 'short now' WHERE id = 2;
UPDATE compressed_columns SET vc = 'short now', tc = REPEAT('again ', 1000) WHERE id = 3;
DELETE FROM decimals WHERE id = 5;
UPDATE nets SET u = '9f1b6c3e-4d2a-4b8e-9c7d-1a2b3c4d5e6f' WHERE id = 4;

-- A transaction of more than 100k rows -------------------------------------------------------------
CREATE TABLE big (id INT PRIMARY KEY, n BIGINT, d DECIMAL(20,4), s VARCHAR(40), t DATETIME(3));
START TRANSACTION;
INSERT INTO big
  SELECT seq, seq * 1000003, seq / 7, CONCAT('row-', seq, '-', REPEAT('x', seq % 17)),
         '2020-01-01 00:00:00' + INTERVAL seq SECOND + INTERVAL (seq % 1000) * 1000 MICROSECOND
  FROM seq_1_to_120000;
COMMIT;
UPDATE big SET n = -n, s = CONCAT(s, '!') WHERE id % 3 = 0;
DELETE FROM big WHERE id % 5 = 0;

-- Compressed events (MariaDB log_bin_compress) ------------------------------------------------------
-- Events of at least log_bin_compress_min_len bytes are written as QUERY_COMPRESSED and
-- *_ROWS_COMPRESSED_V1 events while the global switch is on.
SET GLOBAL log_bin_compress = ON;
CREATE TABLE compressed (id INT PRIMARY KEY, s TEXT, n INT, note VARCHAR(300))
  COMMENT 'A statement longer than log_bin_compress_min_len (256 bytes) is written as a QUERY_COMPRESSED event; this comment makes the CREATE TABLE long enough for that. Padding: ................................................................................................................';
INSERT INTO compressed
  SELECT seq, REPEAT(CONCAT('compressed-', seq, ' '), 40), seq, REPEAT('y', 300) FROM seq_1_to_500;
UPDATE compressed SET n = -n, s = CONCAT(s, 'updated') WHERE id % 2 = 0;
DELETE FROM compressed WHERE id % 7 = 0;
INSERT INTO compressed VALUES (1000, REPEAT('😀', 1000), 1, 'utf8 in a compressed event');
SET GLOBAL log_bin_compress = OFF;
