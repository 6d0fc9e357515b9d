import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * KIP-392 as Kafka's Java consumer lives it: a consumer with client.rack (set by the caller) reads
 * partition 0 of a topic from the beginning. Once it has `first` records it prints a line
 * {"scenario": "rack-follower-first", ...} (the test then stops the in-rack follower and produces more),
 * and goes on until it has `total` records or a minute has passed; the caller prints the rest.
 */
final class RackFollower {
    private RackFollower() {
    }

    /** args: topic, total, first. */
    static Map<String, Object> read(List<String> args, KafkaConsumer<String, String> consumer) {
        String topic = args.get(0);
        int total = Integer.parseInt(args.get(1)), first = Integer.parseInt(args.get(2));
        TopicPartition partition = new TopicPartition(topic, 0);
        List<List<Object>> records = new ArrayList<>();  // [offset, value] in the order read
        boolean announced = false;
        long deadline = System.currentTimeMillis() + 60_000;
        try (consumer) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            while (records.size() < total && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                    records.add(List.of(r.offset(), r.value()));
                }
                if (!announced && records.size() >= first) {
                    announced = true;
                    Map<String, Object> line = new LinkedHashMap<>();
                    line.put("scenario", "rack-follower-first");
                    line.put("count", records.size());
                    synchronized (System.out) {
                        System.out.println(Json.write(line));
                        System.out.flush();
                    }
                }
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("records", records);
        return out;
    }
}
