import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.LeaderAndIsrRequestData.LeaderAndIsrPartitionState;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponsePartition;
import org.apache.kafka.common.message.MetadataResponseData.MetadataResponseTopic;
import org.apache.kafka.common.message.UpdateMetadataRequestData.UpdateMetadataPartitionState;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.LeaderAndIsrRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.MetadataResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.UpdateMetadataRequest;

/**
 * The controller's pushed metadata as Kafka's Java code sees it (issue 25): each broker's Metadata answer
 * read by kafka-clients' own parser, and a zombie controller's UpdateMetadata / LeaderAndIsr built and
 * encoded by kafka-clients' own request classes (the ones Kafka's controller sends), over a plain socket.
 */
final class ControllerPush {
    private ControllerPush() {
    }

    /** args: topic, then broker addresses: partition 0's leader, leader epoch and ISR in each one's Metadata v12;
     *  then a record "java-after" sent to partition 0 by `producer` (acks=all), closed after. */
    static Map<String, Object> leaders(List<String> args, KafkaProducer<String, String> producer) throws Exception {
        String topic = args.get(0);
        Map<String, Object> seen = new TreeMap<>();
        for (String address : args.subList(1, args.size())) {
            MetadataRequest request = new MetadataRequest.Builder(List.of(topic), false, (short) 12).build((short) 12);
            MetadataResponse response = (MetadataResponse) send(address, request, 1);
            MetadataResponseTopic t = response.data().topics().find(topic);
            MetadataResponsePartition p = t.partitions().stream().filter(x -> x.partitionIndex() == 0)
                    .findFirst().orElseThrow();
            seen.put(address, List.of(Errors.forCode(t.errorCode()).name(), p.leaderId(), p.leaderEpoch(),
                    new ArrayList<>(p.isrNodes())));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("seen", seen);
        try (producer) {
            out.put("produced", producer.send(new ProducerRecord<>(topic, 0, null, "java-after")).get().partition());
        }
        return out;
    }

    /** args: topic, the broker's address, the controller's id, the controller epoch to send (a stale one):
     *  the error code names each request is answered with, by "api v<version>". */
    static Map<String, Object> stale(List<String> args) throws Exception {
        String topic = args.get(0), address = args.get(1);
        int controller = Integer.parseInt(args.get(2)), epoch = Integer.parseInt(args.get(3));
        List<Integer> replicas = List.of(1, 2, 3);
        Map<String, Object> answers = new LinkedHashMap<>();
        for (short version : new short[] {8, 5, 0}) {
            UpdateMetadataPartitionState state = new UpdateMetadataPartitionState().setTopicName(topic)
                    .setPartitionIndex(0).setControllerEpoch(epoch).setLeader(3).setLeaderEpoch(99).setIsr(replicas)
                    .setZkVersion(99).setReplicas(replicas);
            AbstractRequest request = new UpdateMetadataRequest.Builder(version, controller, epoch, -1L, List.of(state),
                    List.of(), Map.of()).build(version);
            answers.put("update_metadata v" + version, errors(send(address, request, 10 + version)));
        }
        for (short version : new short[] {7, 4, 0}) {
            LeaderAndIsrPartitionState state = new LeaderAndIsrPartitionState().setTopicName(topic)
                    .setPartitionIndex(0).setControllerEpoch(epoch).setLeader(3).setLeaderEpoch(99).setIsr(replicas)
                    .setPartitionEpoch(99).setReplicas(replicas).setIsNew(false);
            Map<String, Uuid> ids = version >= 5 ? Map.of(topic, Uuid.randomUuid()) : Map.of();
            AbstractRequest request = new LeaderAndIsrRequest.Builder(version, controller, epoch, -1L, List.of(state),
                    ids, List.of()).build(version);
            answers.put("leader_and_isr v" + version, errors(send(address, request, 20 + version)));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("answers", answers);
        return out;
    }

    private static Map<String, Integer> errors(AbstractResponse response) {
        Map<String, Integer> out = new TreeMap<>();
        response.errorCounts().forEach((error, count) -> out.put(error.name(), count));
        return out;
    }

    /** One request, encoded by kafka-clients with its header, and its answer parsed by kafka-clients. */
    private static AbstractResponse send(String address, AbstractRequest request, int correlationId) throws Exception {
        String[] hostPort = address.split(":");
        RequestHeader header = new RequestHeader(request.apiKey(), request.version(), "java-controller-push",
                correlationId);
        ByteBuffer bytes = request.serializeWithHeader(header);
        try (Socket socket = new Socket(hostPort[0], Integer.parseInt(hostPort[1]))) {
            socket.setSoTimeout(30_000);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(bytes.remaining());
            out.write(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
            out.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] answer = new byte[in.readInt()];
            in.readFully(answer);
            return AbstractResponse.parseResponse(ByteBuffer.wrap(answer), header);
        }
    }
}
